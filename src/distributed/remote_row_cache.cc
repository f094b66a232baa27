#include "tessera/distributed/remote_row_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/prefetch.h"
#include "distributed/kv_client.h"
#include "net/transport.h"
#include "server/graph_service.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// The local offsets of the `count` nodes of largest in-degree among partition `part`'s local offsets
// [first, end) (one node type's), asked of its main server.
std::vector<int64_t> hottest_nodes(Context& ctx, int part, int64_t first, int64_t end, int64_t count) {
  net::Header h = net::make_header(server::kTopInDegree, 0, "");
  h.iarg = count;
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::vector<int64_t>{first, end}));
  net::Reply reply = std::move(ctx.client().wait({ctx.client().send(ctx.server_for(part), h, std::move(frames))})[0]);
  if (reply.frames.size() != 1 || reply.frames[0].size() != static_cast<size_t>(count) * sizeof(int64_t))
    fail("the {} nodes of largest in-degree of partition {}: the reply has the wrong size", count, part);
  const int64_t* offsets = reply.frames[0].data<int64_t>();
  return std::vector<int64_t>(offsets, offsets + count);
}

}  // namespace

std::shared_ptr<RemoteRowCache> RemoteRowCache::build(Context& ctx, const store::TensorSpec& spec, double fraction,
                                                      int64_t max_bytes) {
  if (!(fraction >= 0 && fraction <= 1))
    fail("--cache-remote-features must be a fraction of the remote nodes in [0, 1] (got {})", fraction);
  if (fraction == 0 || ctx.standalone()) return nullptr;
  const IdSpace& space = ctx.book().space(spec.policy);
  if (!space.is_node) fail("caching rows of {}: it is indexed by {}, not by nodes", spec.name, spec.policy);

  if (max_bytes < 0) fail("--feature-cache-mb must be 0 or more");
  int64_t remote = 0;
  for (int p = 0; p < ctx.num_parts(); ++p)
    if (p != ctx.local_part()) remote += space.starts[p + 1] - space.starts[p];
  // The share of every remote node the budget allows, if less than asked.
  const double budget_rows = static_cast<double>(max_bytes) / static_cast<double>(std::max<size_t>(1, spec.row_bytes()));
  const double share = remote == 0 ? 0.0 : std::min(fraction, budget_rows / static_cast<double>(remote));

  // The tensor is indexed by its node type's type-local IDs; partition p
  // holds that type's nodes at one run of its local offsets (homogeneous
  // IDs run partition-major, type-minor), whose hottest it names.
  const IdSpace& first_type = ctx.book().node_space(0);
  std::vector<int64_t> ids;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (p == ctx.local_part()) continue;
    const int64_t owned = space.starts[p + 1] - space.starts[p];
    const int64_t count = std::min(owned, static_cast<int64_t>(std::floor(share * static_cast<double>(owned) + 0.5)));
    if (count == 0) continue;
    const int64_t first = space.homogeneous_first[p] - first_type.homogeneous_first[p];
    for (int64_t offset : hottest_nodes(ctx, p, first, first + owned, count)) {
      if (offset < first || offset >= first + owned)
        fail("partition {} named node {} among the hottest of its offsets [{}, {})", p, offset, first, first + owned);
      ids.push_back(space.starts[p] + offset - first);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());

  const int local = ctx.local_part();
  std::shared_ptr<RemoteRowCache> cache(new RemoteRowCache(spec, space.size(), ids, local >= 0 ? space.starts[local] : 0,
                                                           local >= 0 ? space.starts[local + 1] : 0));
  cache->rows_ = pull_rows(ctx, spec, ids.data(), static_cast<int64_t>(ids.size()));
  return cache;
}

RemoteRowCache::RemoteRowCache(store::TensorSpec spec, int64_t id_space, std::vector<int64_t> ids,
                               int64_t local_first, int64_t local_end)
    : spec_(std::move(spec)), local_first_(local_first), local_end_(local_end) {
  const size_t words = static_cast<size_t>(id_space + 63) / 64;
  bits_.assign(words, 0);
  for (int64_t id : ids) bits_[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64);
  before_.resize(words);
  int64_t seen = 0;
  for (size_t w = 0; w < words; ++w) {
    before_[w] = seen;
    seen += __builtin_popcountll(bits_[w]);
  }
}

bool RemoteRowCache::contains(int64_t id) const { return slot(id) >= 0; }

int64_t RemoteRowCache::slot(int64_t id) const {
  const uint64_t word = static_cast<uint64_t>(id) / 64;  // a negative ID wraps out of range
  if (word >= bits_.size()) return -1;
  const uint64_t bit = uint64_t{1} << (static_cast<uint64_t>(id) % 64);
  if ((bits_[word] & bit) == 0) return -1;
  return before_[word] + __builtin_popcountll(bits_[word] & (bit - 1));
}

Array RemoteRowCache::pull(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count) const {
  Array out = Array::uninitialized(spec_.dtype, spec_.shape(count));
  pull_into(ctx, client, rotation, ids, count, out.mutable_raw());
  return out;
}

void RemoteRowCache::pull_into(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count,
                               void* out) const {
  const size_t rb = spec_.row_bytes();
  char* dst = static_cast<char*>(out);
  const char* cached = static_cast<const char*>(rows_.raw());
  // Cached rows are copied here; the rest (local rows and remote misses)
  // are pulled straight to their places.
  std::vector<int64_t> slots(static_cast<size_t>(count)), miss_pos, miss_ids;
  find_slots(ids, count, slots.data(), &miss_pos, &miss_ids);
  for (int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchRows < count && slots[i + kPrefetchRows] >= 0)
      prefetch_row_kept(cached + slots[i + kPrefetchRows] * rb, rb);
    if (slots[i] >= 0) std::memcpy(dst + i * rb, cached + slots[i] * rb, rb);
  }
  pull_rows_into(ctx, client, rotation, spec_, miss_ids.data(), static_cast<int64_t>(miss_ids.size()), out,
                 miss_pos.data());
}

void RemoteRowCache::locate(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count,
                            const char** rows, Array* pulled) const {
  const size_t rb = spec_.row_bytes();
  const char* cached = static_cast<const char*>(rows_.raw());
  std::vector<int64_t> slots(static_cast<size_t>(count)), miss_pos, miss_ids;
  find_slots(ids, count, slots.data(), &miss_pos, &miss_ids);
  for (int64_t i = 0; i < count; ++i)
    if (slots[i] >= 0) rows[i] = cached + slots[i] * rb;
  std::vector<const char*> missed(miss_ids.size());
  locate_rows(ctx, client, rotation, spec_, miss_ids.data(), static_cast<int64_t>(miss_ids.size()), missed.data(),
              pulled);
  for (size_t k = 0; k < missed.size(); ++k) rows[miss_pos[k]] = missed[k];
}

void RemoteRowCache::find_slots(const int64_t* ids, int64_t count, int64_t* slots, std::vector<int64_t>* miss_pos,
                                std::vector<int64_t>* miss_ids) const {
  int64_t local = 0, hits = 0;
  for (int64_t i = 0; i < count; ++i) {
    local += ids[i] >= local_first_ && ids[i] < local_end_;
    slots[i] = slot(ids[i]);
    if (slots[i] >= 0) {
      ++hits;
    } else {
      miss_pos->push_back(i);
      miss_ids->push_back(ids[i]);
    }
  }
  asked_ += count - local;
  found_ += hits;
}

}  // namespace tessera::distributed
