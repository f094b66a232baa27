#include "tessera/sampling/to_block.h"

#include <unordered_map>
#include <utility>

#include "tessera/base/error.h"

namespace tessera::sampling {

Block to_block(const int64_t* src, const int64_t* dst, const int64_t* eids, int64_t num_edges,
               const std::vector<int64_t>& dst_nodes, BlockBuilder& builder, std::vector<int64_t>* order) {
  const int64_t num_dst = static_cast<int64_t>(dst_nodes.size());
  std::unordered_map<int64_t, int64_t> position;
  position.reserve(num_dst * 2);
  for (int64_t d = 0; d < num_dst; ++d)
    if (!position.emplace(dst_nodes[d], d).second) fail("to_block: destination node {} is given twice", dst_nodes[d]);

  // A stable counting sort of the edges by their destination's position.
  std::vector<int64_t> dst_pos(num_edges);
  SampledEdges edges;
  edges.counts.assign(num_dst, 0);
  for (int64_t e = 0; e < num_edges; ++e) {
    const auto it = position.find(dst[e]);
    if (it == position.end())
      fail("to_block: edge {} ({} -> {}) ends at a node that is not among the {} destination nodes", e, src[e], dst[e],
           num_dst);
    dst_pos[e] = it->second;
    ++edges.counts[it->second];
  }
  std::vector<int64_t> next(num_dst + 1, 0);
  for (int64_t d = 0; d < num_dst; ++d) next[d + 1] = next[d] + edges.counts[d];
  edges.src.resize(num_edges);
  edges.eids.resize(num_edges);
  if (order != nullptr) order->resize(num_edges);
  for (int64_t e = 0; e < num_edges; ++e) {
    const int64_t slot = next[dst_pos[e]]++;
    edges.src[slot] = src[e];
    edges.eids[slot] = eids[e];
    if (order != nullptr) (*order)[slot] = e;
  }
  return builder.build(dst_nodes, std::move(edges));
}

}  // namespace tessera::sampling
