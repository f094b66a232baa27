#include "distributed/kv_client.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "store/tensor_ops.h"
#include "net/transport.h"
#include "server/store_service.h"
#include "tessera/base/error.h"
#include "base/prefetch.h"

namespace tessera::distributed {
namespace {

using net::Header;

constexpr size_t kParallelBytes = 1 << 20;
// Size of one pull request's reply: small enough to pipeline, large enough
// that per-message costs vanish (bench/pull.sh: 512 KiB beat 256 KiB, 1 MiB
// and 2 MiB on the 2-core host).
constexpr size_t kChunkBytes = 512 << 10;
// A pull whose IDs all live in one remote partition goes as one request if
// its reply is at most this big: the reply frame then *is* the result, in
// request order, and no copy is made on this side (bench/pull.sh: 11-37%
// faster than chunks for 4 MB pulls). Pulls that mix partitions keep their
// chunks, which overlap gather, transfer and placement and measured faster
// there than one reply per partition. The cap bounds the reply a server
// builds before it can send a byte.
constexpr size_t kWholeReplyBytes = 32 << 20;

// Rows of `values` at `positions`, gathered for one partition's request.
Array pick_rows(const void* values, const std::vector<int64_t>& positions, DType dtype,
                const std::vector<int64_t>& row_shape) {
  std::vector<int64_t> shape{static_cast<int64_t>(positions.size())};
  shape.insert(shape.end(), row_shape.begin(), row_shape.end());
  Array out = Array::uninitialized(dtype, shape);
  const size_t rb = out.row_bytes();
  const char* src = static_cast<const char*>(values);
  char* dst = static_cast<char*>(out.mutable_raw());
  for (size_t i = 0; i < positions.size(); ++i) std::memcpy(dst + i * rb, src + positions[i] * rb, rb);
  return out;
}

store::LocalTensor& local_or_fail(Context& ctx, const std::string& name) {
  store::LocalTensor* t = ctx.local_tensor(name);
  if (t == nullptr) fail("partition {} has no tensor named '{}'", ctx.local_part(), name);
  return *t;
}

// The local partition's tensor `name` when this process writes it in place:
// always standalone; beside servers, once the tensor's segment is published
// (one that another trainer is still creating goes through the server,
// which has it first). Null: send the write to the server.
store::LocalTensor* written_in_place(Context& ctx, int part, const std::string& name) {
  if (!ctx.writes_in_place(part)) return nullptr;
  return ctx.standalone() ? &local_or_fail(ctx, name) : ctx.local_tensor(name);
}

bool all_written_in_place(Context& ctx, int part, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (written_in_place(ctx, part, name) == nullptr) return false;
  return true;
}

// All of a pull's rows from partition `part`, by one request whose reply
// frame becomes the result. Consecutive whole pulls of a thread alternate
// over the partition's servers, as the chunks of one pull do.
Array pull_whole(Context& ctx, net::Client& client, int rotation, const store::TensorSpec& spec, int part,
                 std::vector<int64_t>&& rows) {
  thread_local size_t whole_pulls = 0;
  const int64_t count = static_cast<int64_t>(rows.size());
  Header h = net::make_header(server::kPull, 0, spec.name);
  net::set_shape(&h, DType::kInt64, {count});
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::move(rows)));
  const uint64_t request = client.send(ctx.server_for(part, rotation + whole_pulls++), h, std::move(frames));
  net::Reply reply = std::move(client.wait({request})[0]);
  if (reply.frames.size() != 1 || reply.frames[0].size() != static_cast<size_t>(count) * spec.row_bytes())
    fail("pull from {}: the reply of partition {} has the wrong size", spec.name, part);
  return net::array_of(std::move(reply.frames[0]), spec.dtype, spec.shape(count));
}

}  // namespace

Array pull_rows(Context& ctx, const store::TensorSpec& spec, const int64_t* ids, int64_t count) {
  return pull_rows(ctx, ctx.standalone() ? nullptr : &ctx.client(), 0, spec, ids, count);
}

Array pull_rows(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec, const int64_t* ids,
                int64_t count) {
  const IdSpace& space = ctx.book().space(spec.policy);
  const int local = ctx.local_part();
  const size_t rb = spec.row_bytes();
  // All of them in one remote partition: that partition's reply is the
  // result, and nothing is copied on this side.
  if (client != nullptr && count > 0 && rb * static_cast<size_t>(count) <= kWholeReplyBytes) {
    const int p = space.owner(ids[0]);
    if (p >= 0 && p != local) {
      std::vector<int64_t> rows(static_cast<size_t>(count));
      bool whole = true;
      for (int64_t i = 0; i < count && whole; ++i) {
        whole = space.owner(ids[i]) == p;
        if (whole) rows[i] = space.local_row(ids[i], p);
      }
      if (whole) return pull_whole(ctx, *client, rotation, spec, p, std::move(rows));
    }
  }
  Array out = Array::uninitialized(spec.dtype, spec.shape(count));
  pull_rows_into(ctx, client, rotation, spec, ids, count, out.mutable_raw(), nullptr);
  return out;
}

void pull_rows_into(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec,
                    const int64_t* ids, int64_t count, void* out, const int64_t* positions) {
  const IdSpace& space = ctx.book().space(spec.policy);
  const int local = ctx.local_part();

  // One pass sorts the IDs: local ones become row numbers (-1 elsewhere),
  // remote ones are grouped per partition for the requests. A local ID is
  // recognised by one unsigned range check before the general owner lookup
  // (bench/pull.sh: local pulls 8% faster).
  std::vector<int64_t> local_row(count, -1);
  std::vector<std::vector<int64_t>> remote_rows(ctx.num_parts()), remote_pos(ctx.num_parts());
  bool any_local = false;
  const int64_t local_first = local >= 0 ? space.starts[local] : 0;
  const uint64_t local_size = local >= 0 ? static_cast<uint64_t>(space.starts[local + 1] - local_first) : 0;
  for (int64_t i = 0; i < count; ++i) {
    // Unsigned: a negative ID wraps to a huge offset and fails the check.
    const uint64_t offset = static_cast<uint64_t>(ids[i]) - static_cast<uint64_t>(local_first);
    if (offset < local_size) {
      local_row[i] = static_cast<int64_t>(offset);
      any_local = true;
      continue;
    }
    const int p = space.owner(ids[i]);
    if (p < 0) fail("pull from {}: ID {} is out of range ({} has {} IDs)", spec.name, ids[i], space.policy, space.size());
    remote_rows[p].push_back(space.local_row(ids[i], p));
    remote_pos[p].push_back(i);
  }

  const size_t rb = spec.row_bytes();
  char* dst = static_cast<char*>(out);
  // Row i's place in `out`.
  const auto place = [&](int64_t i) { return dst + (positions != nullptr ? positions[i] : i) * rb; };

  // Remote rows go in chunks, all sent before any reply is awaited: the
  // servers gather chunk k+1 while chunk k is on the wire and this thread
  // copies chunk k-1 into place. Chunks rotate over the partition's servers.
  struct Chunk {
    int part;
    size_t begin, end;  // positions in remote_pos[part]
    uint64_t request;
  };
  std::vector<Chunk> chunks;
  const size_t per_chunk = std::max<size_t>(1, kChunkBytes / std::max<size_t>(rb, 1));
  for (int p = 0; p < ctx.num_parts(); ++p) {
    const auto& rows = remote_rows[p];
    for (size_t begin = 0, k = 0; begin < rows.size(); begin += per_chunk, ++k) {
      const size_t end = std::min(rows.size(), begin + per_chunk);
      Header h = net::make_header(server::kPull, 0, spec.name);
      net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(end - begin)});
      std::vector<zmq::message_t> frames;
      frames.push_back(net::frame_of(std::vector<int64_t>(rows.begin() + begin, rows.begin() + end)));
      if (client == nullptr) fail("internal: pull from {} needs remote rows but has no connection", spec.name);
      chunks.push_back({p, begin, end, client->send(ctx.server_for(p, k + rotation), h, std::move(frames))});
    }
  }

  // While the requests travel, copy the local rows straight from memory.
  if (any_local) {
    const store::LocalTensor& t = local_or_fail(ctx, spec.name);
    if (t.rows.row_bytes() != rb)
      fail("tensor {}: local rows have {} bytes, expected {}", spec.name, t.rows.row_bytes(), rb);
    const int64_t limit = t.num_rows();
    const char* src = static_cast<const char*>(t.rows.raw());
    // A tensor the job writes (a DistTensor, embeddings) is read under the machine's row locks, since other
    // processes' pushes and optimizer steps write its rows in place meanwhile; on this thread, since a lock
    // never released throws and no exception may leave an OpenMP region (even an inactive one).
    store::RowLocks* locks = t.writable ? &ctx.local_locks() : nullptr;
    bool in_range = true;
    // Row i's copy (none for a remote row); false when the row is past the local partition.
    const auto copy = [&](int64_t i) {
      const int64_t r = local_row[i];
      if (i + kPrefetchRows < count && local_row[i + kPrefetchRows] >= 0 && local_row[i + kPrefetchRows] < limit)
        prefetch_row_kept(src + local_row[i + kPrefetchRows] * rb, rb);
      if (r < 0) return true;
      if (r >= limit) return false;
      store::copy_row(t, r, rb, locks, place(i));
      return true;
    };
    if (locks != nullptr) {
      for (int64_t i = 0; i < count; ++i) in_range = copy(i) && in_range;
    } else {
      const bool parallel = rb * static_cast<size_t>(count) >= kParallelBytes;
#pragma omp parallel for schedule(static) if (parallel) reduction(&& : in_range)
      for (int64_t i = 0; i < count; ++i) in_range = copy(i) && in_range;
    }
    if (!in_range) fail("tensor {}: the local partition holds fewer rows than the partition book says", spec.name);
  }

  for (const Chunk& c : chunks) {
    const net::Reply reply = std::move(client->wait({c.request})[0]);
    if (reply.frames.size() != 1 || reply.frames[0].size() != (c.end - c.begin) * rb)
      fail("pull from {}: the reply of partition {} has the wrong size", spec.name, c.part);
    const char* src = reply.frames[0].data<char>();
    const int64_t* asked_at = remote_pos[c.part].data() + c.begin;
    const int64_t n = static_cast<int64_t>(c.end - c.begin);
#pragma omp parallel for schedule(static) if (rb * n >= kParallelBytes)
    for (int64_t i = 0; i < n; ++i) std::memcpy(place(asked_at[i]), src + i * rb, rb);
  }
}

void locate_rows(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec, const int64_t* ids,
                 int64_t count, const char** rows, Array* pulled) {
  const IdSpace& space = ctx.book().space(spec.policy);
  const int local = ctx.local_part();
  const int64_t local_first = local >= 0 ? space.starts[local] : 0;
  const uint64_t local_size = local >= 0 ? static_cast<uint64_t>(space.starts[local + 1] - local_first) : 0;
  const size_t rb = spec.row_bytes();
  const char* local_rows = nullptr;
  int64_t limit = 0;
  if (local_size > 0) {
    const store::LocalTensor& t = local_or_fail(ctx, spec.name);
    if (t.rows.row_bytes() != rb)
      fail("tensor {}: local rows have {} bytes, expected {}", spec.name, t.rows.row_bytes(), rb);
    local_rows = static_cast<const char*>(t.rows.raw());
    limit = t.num_rows();
  }
  std::vector<int64_t> remote_ids, remote_pos;
  for (int64_t i = 0; i < count; ++i) {
    // Unsigned: a negative ID wraps to a huge offset and is left to the pull's checks.
    const uint64_t offset = static_cast<uint64_t>(ids[i]) - static_cast<uint64_t>(local_first);
    if (offset < local_size) {
      if (static_cast<int64_t>(offset) >= limit)
        fail("tensor {}: the local partition holds fewer rows than the partition book says", spec.name);
      rows[i] = local_rows + offset * rb;
    } else {
      remote_ids.push_back(ids[i]);
      remote_pos.push_back(i);
    }
  }
  if (remote_ids.empty()) return;
  const int64_t n = static_cast<int64_t>(remote_ids.size());
  *pulled = Array::uninitialized(spec.dtype, spec.shape(n));
  pull_rows_into(ctx, client, rotation, spec, remote_ids.data(), n, pulled->mutable_raw(), nullptr);
  const char* base = static_cast<const char*>(pulled->raw());
  for (int64_t k = 0; k < n; ++k) rows[remote_pos[k]] = base + k * rb;
}

void push_rows(Context& ctx, const store::TensorSpec& spec, const int64_t* ids, int64_t count, const void* values,
               store::PushMode mode) {
  const IdSpace& space = ctx.book().space(spec.policy);
  SplitIds split = ctx.book().split(space, ids, count, "push to " + spec.name);
  std::vector<uint64_t> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (split.local_rows[p].empty()) continue;
    Array rows = pick_rows(values, split.positions[p], spec.dtype, spec.row_shape);
    const int64_t n = static_cast<int64_t>(split.local_rows[p].size());
    if (store::LocalTensor* t = written_in_place(ctx, p, spec.name)) {
      if (mode == store::PushMode::kAdd) store::add_rows(*t, split.local_rows[p].data(), n, rows.raw(), ctx.local_locks());
      else store::assign_rows(*t, split.local_rows[p].data(), n, rows.raw(), ctx.local_locks());
      continue;
    }
    Header h = net::make_header(server::kPush, 0, spec.name);
    net::set_shape(&h, DType::kInt64, {n});
    h.iarg = static_cast<int64_t>(mode);
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(split.local_rows[p])));
    frames.push_back(net::frame_of(rows));
    requests.push_back(ctx.client().send(ctx.server_for(p), h, std::move(frames)));
  }
  if (!requests.empty()) ctx.client().wait(requests);
}

void sparse_step(Context& ctx, const std::string& weight, const std::string& policy, const int64_t* ids,
                 int64_t count, const float* grads, int64_t row_elems, const store::SparseStepParams& params) {
  const std::vector<uint64_t> requests = send_sparse_step(ctx, weight, policy, ids, count, grads, row_elems, params);
  if (!requests.empty()) ctx.client().wait(requests);
}

std::vector<uint64_t> send_sparse_step(Context& ctx, const std::string& weight, const std::string& policy,
                                       const int64_t* ids, int64_t count, const float* grads, int64_t row_elems,
                                       const store::SparseStepParams& params) {
  const IdSpace& space = ctx.book().space(policy);
  SplitIds split = ctx.book().split(space, ids, count, "optimizer step on " + weight);
  std::vector<uint64_t> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (split.local_rows[p].empty()) continue;
    const int64_t n = static_cast<int64_t>(split.local_rows[p].size());
    Array rows = pick_rows(grads, split.positions[p], DType::kFloat32, {row_elems});
    if (all_written_in_place(ctx, p, store::sparse_step_tensors(params.kind, weight))) {
      store::apply_sparse_step([&](const std::string& s) -> store::LocalTensor& { return local_or_fail(ctx, s); },
                               weight, params, split.local_rows[p].data(), n, rows.data<float>(), ctx.local_locks());
      continue;
    }
    Header h = net::make_header(server::kSparseStep, 0, weight);
    net::set_shape(&h, DType::kInt64, {n});
    h.iarg = static_cast<int64_t>(params.kind);
    h.fargs[0] = params.lr;
    h.fargs[1] = params.eps;
    h.fargs[2] = params.beta1;
    h.fargs[3] = params.beta2;
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(split.local_rows[p])));
    frames.push_back(net::frame_of(rows));
    requests.push_back(ctx.client().send(ctx.server_for(p), h, std::move(frames)));
  }
  return requests;
}

void create_tensor(Context& ctx, const store::TensorSpec& spec) {
  const IdSpace& space = ctx.book().space(spec.policy);
  if (ctx.standalone()) {
    if (store::LocalTensor* t = ctx.local().find(spec.name)) {
      if (t->spec.dtype != spec.dtype || t->spec.row_shape != spec.row_shape || t->spec.policy != spec.policy)
        fail("tensor '{}' exists with another type or shape", spec.name);
      return;
    }
    ctx.local().add(store::create_heap_tensor(spec, 0, space.size()));
    return;
  }
  std::vector<uint64_t> requests;
  for (int m = 0; m < ctx.num_parts(); ++m) {
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(spec.to_json()));
    // Server 0 of each machine is its main server: it creates the segment.
    requests.push_back(ctx.client().send(m * ctx.env().num_servers, net::make_header(server::kCreate, 0, spec.name),
                                         std::move(frames)));
  }
  ctx.client().wait(requests);
}

void delete_tensor(Context& ctx, const std::string& name) {
  if (ctx.standalone()) {
    ctx.local().remove(name);
    return;
  }
  std::vector<uint64_t> requests;
  for (int i = 0; i < ctx.client().num_servers(); ++i)
    requests.push_back(ctx.client().send(i, net::make_header(server::kDelete, 0, name), {}));
  ctx.client().wait(requests);
  if (ctx.has_local_part()) ctx.local().remove(name);
}

}  // namespace tessera::distributed
