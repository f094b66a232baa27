// A block (DGL's message-flow graph): one layer of a sampled mini-batch. Its destinations are the nodes whose
// representations the layer computes; its sources are the destinations first, then every other sampled
// neighbour, numbered 0..num_src-1; its edges run source -> destination and are stored as CSR by destination,
// which is what an aggregation needs.
//
// A Block is a plain value that owns its vectors; it has no methods that change it and no locks, so several
// threads may read one, and moving it is cheap. Header-only; nothing here throws.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::sampling {

struct Block {
  int64_t num_dst = 0;
  std::vector<int64_t> src_nodes;  // homogeneous node IDs; [0, num_dst) are the destinations
  std::vector<int64_t> indptr;     // [num_dst + 1]: destination d's edges are [indptr[d], indptr[d+1])
  std::vector<int64_t> indices;    // per edge: the source's position in src_nodes
  std::vector<int64_t> eids;       // per edge: the edge ID
  std::vector<int32_t> etypes;     // per edge: the edge type (empty when the graph has one)
  std::vector<int32_t> src_ntypes; // per source: its node type (empty when the graph has one)

  int64_t num_src() const { return static_cast<int64_t>(src_nodes.size()); }
  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
};

}  // namespace tessera::sampling
