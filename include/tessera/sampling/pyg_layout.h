// A mini-batch's blocks laid out as PyG's sampled subgraph (what PyG's NeighborLoader yields).
//
// The sampler gives one block per layer, and every block samples all of its destinations: the seeds are
// sampled again at each hop. PyG samples hop h only from the nodes hop h-1 discovered. Both list nodes the
// same way (the seeds, then each hop's new nodes in the order found), because a block's sources start with its
// destinations: every block indexes the first block's source list. The layout keeps, per hop, the edges into
// that hop's frontier (the kept nodes the previous hop added) and the nodes they reach, hop by hop, so PyG's
// trim_to_layer can drop the hops a layer no longer needs. With three or more hops, a node first reached at
// hop h >= 3 through a position an earlier block listed keeps that earlier place and is not expanded again.
//
// A plain function of its arguments; it throws nothing for blocks the sampler made.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/sampling/block.h"

namespace tessera::sampling {

struct PygSubgraph {
  int64_t num_seeds = 0;
  std::vector<int64_t> nodes;     // homogeneous IDs: the seeds first, then each hop's new nodes (PyG's n_id)
  std::vector<int64_t> src, dst;  // per edge: positions in `nodes` of its source and target (edge_index)
  std::vector<int64_t> eids;      // per edge: its ID (PyG's e_id)
  std::vector<int32_t> etypes;    // per edge: its type (empty when the graph has one)
  std::vector<int64_t> nodes_per_hop;  // PyG's num_sampled_nodes: the seeds, then each hop's new nodes
  std::vector<int64_t> edges_per_hop;  // PyG's num_sampled_edges
};

// `blocks`: input layer first, as the sampler returns them.
PygSubgraph pyg_layout(const std::vector<Block>& blocks);

}  // namespace tessera::sampling
