// Edge mini-batches (DGL's DistEdgeDataLoader / EdgePredictionSampler): a batch of edge IDs becomes the pairs a
// link predictor scores — the edges themselves and, for each, negatives drawn here in C++ — over one compact set
// of nodes, whose blocks are then sampled with the batch's edges (and their reverses) left out.
//
// Plain values and one function; plan_edge_batch() uses the connection it is given (one per thread) and the
// Context's read-only state, so sampler threads may call it at once. Errors are tessera::Error: an edge ID out
// of range, a reverse edge ID out of range, or a server that does not answer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/sampling/edge_exclusion.h"

namespace tessera::net {
class Client;
}

namespace tessera::sampling {

struct NegativeSampling {
  enum class Mode {
    kNone,
    kPerSource,  // DGL's Uniform / PerSourceUniform: k corrupted destinations per edge, its source kept
    kGlobal,     // DGL's GlobalUniform: k * batch pairs drawn from all nodes that are not edges of the graph
    kCallback,   // a user's sampler: `callback` gives the pairs for the batch's edge IDs
  };
  // On a typed graph, a negative has its positive's edge type, and its ends
  // are drawn from that type's source and destination node types.
  Mode mode = Mode::kNone;
  int64_t k = 0;
  bool exclude_self_loops = true;  // kGlobal only
  bool replace = false;            // kGlobal only: without it, no pair is drawn twice in a batch
  // kCallback: (sources, destinations) of the negatives for a batch's edge
  // IDs, homogeneous node IDs, and on a typed graph the edge type of each
  // pair in *etypes (left empty otherwise); called on a sampler thread, so it
  // must be thread-safe. A node ID out of range, a missing or unknown edge
  // type, or an end whose node type is not its edge type's is an error.
  std::function<void(const std::vector<int64_t>& eids, std::vector<int64_t>* src, std::vector<int64_t>* dst,
                     std::vector<int64_t>* etypes)>
      callback;
};

struct EdgeBatchOptions {
  NegativeSampling negatives;
  // kSelfAndReverse: every edge joining a batch pair's nodes, either way (the
  // reverse without a reverse-ID map; what `tessera train link` leaves out).
  // kReverseTypes: the edges themselves and, for an edge u -> v of a type
  // with a reverse type, the edges v -> u of that reverse type (DGL's
  // reverse_types; found by their ends, since the partitioner numbers each
  // type's edges on its own).
  enum class Exclude { kNone, kSelf, kReverseId, kSelfAndReverse, kReverseTypes, kCallback };
  Exclude exclude = Exclude::kNone;
  std::vector<int64_t> reverse_eids;  // kReverseId: reverse_eids[e] is edge e's reverse
  std::map<int, int> reverse_etypes;  // kReverseTypes: edge type -> its reverse type
  // kCallback: the edge IDs to exclude for a batch's edges (DGL's callable
  // `exclude`); called on a sampler thread, so it must be thread-safe.
  std::function<std::vector<int64_t>(const std::vector<int64_t>& eids)> exclude_callback;
  // Node pairs to batch instead of the graph's edges (PyG's edge_label_index;
  // homogeneous node IDs): when set, a batch's "edge IDs" are indices into
  // these, its ends are read here rather than found on the servers, and
  // nothing is excluded (kNone). Pairs need not be edges of the graph. On a
  // typed graph every pair is of edge type `pair_etype`, whose ends' node
  // types its ends must have.
  std::vector<int64_t> pair_src, pair_dst;
  int pair_etype = -1;
};

// The edge part of one batch. Positions index the batch's seed nodes (its
// pair graphs' nodes and its last block's destinations).
struct EdgeBatch {
  std::vector<int64_t> eids;             // the positive edges, in batch order
  std::vector<int64_t> src, dst;         // their ends
  std::vector<int64_t> neg_src, neg_dst; // the negative pairs (empty without negative sampling)
  // On a graph of several node or edge types, the edge type of each positive
  // and each negative pair; empty otherwise.
  std::vector<int64_t> etypes, neg_etypes;
};

// Finds the ends of `eids`, draws their negatives (every choice fixed by
// `key`), and returns in *seeds the distinct nodes of all the pairs, sorted,
// with the pairs as positions into them, and in *exclude (sealed) what the
// blocks must leave out.
void plan_edge_batch(distributed::Context& ctx, net::Client* client, int rotation, const EdgeBatchOptions& options,
                     std::vector<int64_t> eids, uint64_t key, EdgeBatch* batch, std::vector<int64_t>* seeds,
                     EdgeExclusion* exclude);

}  // namespace tessera::sampling
