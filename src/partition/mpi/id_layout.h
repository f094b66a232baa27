// What every rank of a distributed partitioning knows about the ID spaces, without holding the graph: where each
// node type starts in the homogeneous ID space, where each edge type starts in the global edge order (types in
// order, chunks in order within a type: the order the single-machine partitioner walks edges in), where each
// edge chunk starts, and PT-Scotch's block distribution of the nodes over the ranks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera {

struct IdLayout {
  std::vector<int64_t> node_offset;                     // [T + 1]
  std::vector<int64_t> edge_offset;                     // [K + 1]
  std::vector<std::vector<int64_t>> edge_chunk_start;   // [K][C_k + 1], type-local edge indices
  std::vector<int64_t> vertex_start;                    // [R + 1]: rank r holds nodes [start[r], start[r+1])

  static int range_of(const std::vector<int64_t>& starts, int64_t id) {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), id) - starts.begin()) - 1;
  }
  int node_type_of(int64_t v) const { return range_of(node_offset, v); }
  int edge_type_of(int64_t g) const { return range_of(edge_offset, g); }
  int vertex_owner(int64_t v) const { return range_of(vertex_start, v); }
  int64_t num_nodes() const { return node_offset.back(); }
  int64_t num_edges() const { return edge_offset.back(); }
};

}  // namespace tessera
