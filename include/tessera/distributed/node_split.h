// node_split / edge_split: each trainer's share of a set of IDs (usually the training nodes), as in DGL. Shares
// prefer IDs the trainer's own machine owns, so most of a trainer's seeds are local.
//
// Each trainer computes its own share from the mask, with no collective call; the shares partition the masked
// IDs only when every trainer passes the same mask and force_even. The result is a new vector the caller owns.
// The calls use the Context's connection, so they run on the Context's thread. Errors are tessera::Error naming
// the mask: not a bool (or uint8) tensor of one value per row, or not of a node (edge) type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_tensor.h"

namespace tessera::distributed {

// `mask`: a bool (or uint8) DistTensor over a node or edge type, such as
// g.ndata("train_mask"). force_even: every trainer gets the same number of
// IDs (±1), taken in ID order, which keeps them mostly local since IDs are
// partition-major. Otherwise each trainer gets an even share of the masked
// IDs its own partition owns; in server-client mode, or when a machine runs
// no trainers, the split is even as with force_even. Returns type-local IDs,
// sorted.
std::vector<int64_t> node_split(Context& ctx, const DistTensor& mask, bool force_even = true);

// DGL's even split of `n` items between `world` ranks: the positions
// [first, second) that `rank` takes, in order; the first n % world ranks take
// one more. Every split into equal shares goes through it (Python's included).
std::pair<int64_t, int64_t> even_range(int64_t n, int rank, int world);
std::vector<int64_t> edge_split(Context& ctx, const DistTensor& mask, bool force_even = true);

class DistGraph;

// This trainer's force_even shares of a node type's train_mask, val_mask
// and test_mask (`ntype` "" when the graph has one node type); a mask the
// graph lacks gives an empty share. Every trainer passes the same graph
// and type, so that the shares split the IDs between them.
struct NodeSplits {
  std::vector<int64_t> train, val, test;
};
NodeSplits split_masks(Context& ctx, const DistGraph& graph, const std::string& ntype = "");

}  // namespace tessera::distributed
