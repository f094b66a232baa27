#include "partition/mpi/mpi_world.h"

#include <unistd.h>

#include <algorithm>

#include "tessera/base/error.h"

namespace tessera {
namespace {

// Whether this process started MPI. Under ASan (scripts/sanitize) such a process skips LeakSanitizer's check at
// exit: OpenMPI keeps what its components and its progress thread allocate for good, and unloads the
// components at MPI_Finalize, so at exit those allocations are leaks whose frames show only as "<unknown
// module>" (checked earlier, the fast unwinder still loses them in OpenMPI's frames): no suppression in
// tests/sanitizers.supp can name them. ASan's and UBSan's checks still run in these processes.
bool g_started_mpi = false;

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  fail("MPI call {} failed: {}", call, std::string(text, length));
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer asks this (a weak symbol of its runtime) before its check at exit.
extern "C" int __lsan_is_turned_off() { return g_started_mpi ? 1 : 0; }
#endif

MpiWorld::MpiWorld(int* argc, char*** argv) {
  int provided = 0;
  g_started_mpi = true;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  // Errors come back as codes, so they become one line naming the call.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  host_ = name;
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  MPI_Comm_size(local, &ranks_on_host_);
  MPI_Comm_free(&local);
  if (provided < MPI_THREAD_MULTIPLE)
    fail("this MPI library gives thread level {} but PT-Scotch needs MPI_THREAD_MULTIPLE", provided);
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

void MpiWorld::barrier() const { check(MPI_Barrier(comm()), "MPI_Barrier"); }

void MpiWorld::abort(int code) const {
  MPI_Abort(comm(), code);
  _exit(code);
}

int64_t MpiWorld::sum(int64_t value) const {
  int64_t total = 0;
  check(MPI_Allreduce(&value, &total, 1, MPI_INT64_T, MPI_SUM, comm()), "MPI_Allreduce");
  return total;
}

int64_t MpiWorld::max(int64_t value) const {
  int64_t result = 0;
  check(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MAX, comm()), "MPI_Allreduce");
  return result;
}

void MpiWorld::sum_in_place(std::vector<int64_t>* values) const {
  if (values->empty()) return;
  check(MPI_Allreduce(MPI_IN_PLACE, values->data(), static_cast<int>(values->size()), MPI_INT64_T, MPI_SUM, comm()),
        "MPI_Allreduce");
}

std::vector<int64_t> MpiWorld::gather_all(int64_t value) const {
  std::vector<int64_t> all(size_);
  check(MPI_Allgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm()), "MPI_Allgather");
  return all;
}

std::vector<std::string> MpiWorld::gather_all(const std::string& value) const {
  std::vector<std::vector<char>> out(size_, std::vector<char>(value.begin(), value.end()));
  std::vector<int64_t> counts;
  const std::vector<char> in = exchange(out, &counts);
  std::vector<std::string> all(size_);
  size_t at = 0;
  for (int r = 0; r < size_; ++r) {
    all[r].assign(in.data() + at, static_cast<size_t>(counts[r]));
    at += counts[r];
  }
  return all;
}

std::string MpiWorld::broadcast(std::string value, int root) const {
  int64_t length = static_cast<int64_t>(value.size());
  check(MPI_Bcast(&length, 1, MPI_INT64_T, root, comm()), "MPI_Bcast");
  value.resize(length);
  if (length > 0) check(MPI_Bcast(value.data(), static_cast<int>(length), MPI_CHAR, root, comm()), "MPI_Bcast");
  return value;
}

std::vector<int64_t> MpiWorld::exchange_counts(const std::vector<int64_t>& to) const {
  std::vector<int64_t> from(size_);
  check(MPI_Alltoall(to.data(), 1, MPI_INT64_T, from.data(), 1, MPI_INT64_T, comm()), "MPI_Alltoall");
  return from;
}

void MpiWorld::exchange_bytes(const std::vector<const char*>& data, const std::vector<int64_t>& bytes,
                              const std::vector<int64_t>& from, char* in) const {
  std::vector<MPI_Request> requests;
  int64_t at = 0;
  for (int r = 0; r < size_; ++r) {
    // Pieces between a pair arrive in the order posted (same tag, same communicator).
    for (int64_t offset = 0; offset < from[r]; offset += kMessageBytes) {
      const int n = static_cast<int>(std::min(kMessageBytes, from[r] - offset));
      requests.emplace_back();
      check(MPI_Irecv(in + at + offset, n, MPI_BYTE, r, 7, comm(), &requests.back()), "MPI_Irecv");
    }
    at += from[r];
  }
  for (int d = 0; d < size_; ++d)
    for (int64_t offset = 0; offset < bytes[d]; offset += kMessageBytes) {
      const int n = static_cast<int>(std::min(kMessageBytes, bytes[d] - offset));
      requests.emplace_back();
      check(MPI_Isend(data[d] + offset, n, MPI_BYTE, d, 7, comm(), &requests.back()), "MPI_Isend");
    }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

int64_t MpiWorld::rounds_for(int64_t local_items, int64_t batch) const {
  return max((local_items + batch - 1) / batch);
}

}  // namespace tessera
