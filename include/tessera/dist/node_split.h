// node_split / edge_split: each trainer's share of a set of IDs (usually the
// training nodes), as in DGL. Shares prefer IDs the trainer's own machine
// owns, so most of a trainer's seeds are local.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/dist/context.h"
#include "tessera/dist/dist_tensor.h"

namespace tessera::dist {

// `mask`: a bool (or uint8) DistTensor over a node or edge type, such as
// g.ndata("train_mask"). force_even: every trainer gets the same number of
// IDs (±1), taken in ID order, which keeps them mostly local since IDs are
// partition-major. Otherwise each trainer gets an even share of the masked
// IDs its own partition owns; in server-client mode, or when a machine runs
// no trainers, the split is even as with force_even. Returns type-local IDs,
// sorted.
std::vector<int64_t> node_split(Context& ctx, const DistTensor& mask, bool force_even = true);
std::vector<int64_t> edge_split(Context& ctx, const DistTensor& mask, bool force_even = true);

}  // namespace tessera::dist
