// DGL's to_block: a graph's edges, all of whose destinations are among `dst_nodes`, as one Block — the
// destinations first as sources (DGL's include_dst_in_src), the other sources after them in order of first
// appearance, and the edges laid out by destination. What the guide's hand-written sampler calls after
// sample_neighbors().
//
// Uses the caller's BlockBuilder (one per thread). Errors are tessera::Error: an edge whose destination is not
// in `dst_nodes` (naming it), or a repeated destination.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/sampling/block.h"
#include "tessera/sampling/block_builder.h"

namespace tessera::sampling {

// Edges src[i] -> dst[i] with IDs eids[i] (homogeneous node IDs). `order`,
// if given, receives for each of the block's edges its index i in the input,
// so that edge data can follow.
Block to_block(const int64_t* src, const int64_t* dst, const int64_t* eids, int64_t num_edges,
               const std::vector<int64_t>& dst_nodes, BlockBuilder& builder, std::vector<int64_t>* order = nullptr);

}  // namespace tessera::sampling
