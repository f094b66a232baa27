#include "tessera/distributed/collectives.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "distributed/collective_backend.h"
#include "job/rendezvous.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Bench hook: TESSERA_BENCH_COLLECTIVES=gloo puts an encrypted job's
// collectives on Gloo in the clear, so bench/sage.sh can compare the two
// wires with everything else encrypted (--insecure also drops CURVE from
// the servers' traffic). Every trainer must have it; never for real jobs.
bool bench_asks_for_gloo() {
  const char* wire = std::getenv("TESSERA_BENCH_COLLECTIVES");
  if (wire == nullptr || *wire == '\0' || std::strcmp(wire, "ring") == 0) return false;
  if (std::strcmp(wire, "gloo") != 0)
    fail("TESSERA_BENCH_COLLECTIVES is '{}', expected ring or gloo (a bench hook; leave it unset)", wire);
  return true;
}

}  // namespace

Collectives::Collectives(job::Rendezvous* store, const std::string& prefix, int rank, int size, const std::string& my_ip,
                         int timeout_s, CollectiveWire wire)
    : rank_(rank), size_(size) {
  if (size <= 1) return;
  if (store == nullptr) fail("collectives of {} members need the job's rendezvous store", size);
  // An --insecure job (PLAIN) keeps Gloo, as before the secured ring.
  const bool gloo = wire == CollectiveWire::kGloo ||
                    (wire == CollectiveWire::kAsTheJob && (!store->security().encrypt || bench_asks_for_gloo()));
  secured_ = !gloo;
  backend_ = gloo ? gloo_collectives(*store, prefix, rank, size, my_ip, timeout_s)
                  : ring_collectives(*store, prefix, rank, size, my_ip, timeout_s);
}

Collectives::~Collectives() = default;

void Collectives::all_reduce_sum(float* data, int64_t count) {
  if (backend_) backend_->all_reduce_sum(data, count, DType::kFloat32);
}
void Collectives::all_reduce_sum(double* data, int64_t count) {
  if (backend_) backend_->all_reduce_sum(data, count, DType::kFloat64);
}
void Collectives::all_reduce_sum(int64_t* data, int64_t count) {
  if (backend_) backend_->all_reduce_sum(data, count, DType::kInt64);
}

void Collectives::broadcast(float* data, int64_t count, int root) {
  if (backend_) backend_->broadcast(data, count * static_cast<int64_t>(sizeof(float)), root);
}

void Collectives::broadcast_bytes(void* data, int64_t bytes, int root) {
  if (backend_) backend_->broadcast(data, bytes, root);
}

void Collectives::barrier() {
  int64_t one = 1;
  all_reduce_sum(&one, 1);
}

std::vector<std::vector<int64_t>> Collectives::all_gather(const std::vector<int64_t>& values) {
  if (!backend_) return {values};
  // Sums of zero-padded rows: agree on the longest, pad, then trim.
  std::vector<int64_t> lengths(size_, 0);
  lengths[rank_] = static_cast<int64_t>(values.size());
  all_reduce_sum(lengths.data(), size_);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> all(static_cast<size_t>(longest) * size_, 0);
  std::copy(values.begin(), values.end(), all.begin() + rank_ * longest);
  all_reduce_sum(all.data(), static_cast<int64_t>(all.size()));
  std::vector<std::vector<int64_t>> out(size_);
  for (int r = 0; r < size_; ++r) out[r].assign(all.begin() + r * longest, all.begin() + r * longest + lengths[r]);
  return out;
}

}  // namespace tessera::distributed
