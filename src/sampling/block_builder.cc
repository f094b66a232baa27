#include "tessera/sampling/block_builder.h"

#include <limits>
#include <utility>

#include "tessera/base/error.h"
#include "base/prefetch.h"

namespace tessera::sampling {

BlockBuilder::BlockBuilder(int64_t num_nodes) : slot_(num_nodes, -1) {}

Block BlockBuilder::build(const std::vector<int64_t>& dst, SampledEdges&& edges) {
  const int64_t num_dst = static_cast<int64_t>(dst.size());
  if (static_cast<int64_t>(edges.counts.size()) != num_dst)
    fail("internal: {} sampled edge counts for {} destinations", edges.counts.size(), num_dst);
  const int64_t num_nodes = static_cast<int64_t>(slot_.size());
  const int64_t num_edges = static_cast<int64_t>(edges.src.size());
  if (num_dst + num_edges > std::numeric_limits<int32_t>::max())
    fail("a block of {} destinations and {} edges is too large", num_dst, num_edges);

  Block block;
  block.num_dst = num_dst;
  block.src_nodes.reserve(num_dst + num_edges / 2);
  block.indptr.resize(num_dst + 1);
  block.indices.resize(num_edges);
  block.eids = std::move(edges.eids);
  block.etypes = std::move(edges.etypes);
  if (!block.etypes.empty() && static_cast<int64_t>(block.etypes.size()) != num_edges)
    fail("internal: {} edge types for {} sampled edges", block.etypes.size(), num_edges);

  for (int64_t d = 0; d < num_dst; ++d) {
    const int64_t node = dst[d];
    if (node < 0 || node >= num_nodes) fail("block: destination {} is not a node (graph has {})", node, num_nodes);
    if (slot_[node] >= 0) fail("block: destination {} appears twice", node);
    slot_[node] = static_cast<int32_t>(d);
    block.src_nodes.push_back(node);
  }
  int64_t offset = 0;
  for (int64_t d = 0; d < num_dst; ++d) {
    block.indptr[d] = offset;
    offset += edges.counts[d];
  }
  block.indptr[num_dst] = offset;
  if (offset != num_edges) fail("internal: edge counts sum to {} but {} edges were sampled", offset, num_edges);

  const int64_t* src = edges.src.data();
  for (int64_t e = 0; e < num_edges; ++e) {
    if (e + kPrefetchRows < num_edges) __builtin_prefetch(&slot_[src[e + kPrefetchRows]], 1, 0);
    const int64_t node = src[e];
    int32_t& slot = slot_[node];
    if (slot < 0) {
      slot = static_cast<int32_t>(block.src_nodes.size());
      block.src_nodes.push_back(node);
    }
    block.indices[e] = slot;
  }
  for (const int64_t node : block.src_nodes) slot_[node] = -1;
  return block;
}

}  // namespace tessera::sampling
