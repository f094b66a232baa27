// Neighbour sampling on one partition's in-edge CSC: for each seed, up to `fanout` of its in-edges, uniformly
// or in proportion to an edge weight, without replacement unless asked. Every seed draws from its own random
// stream keyed by (key, seed ID), so a batch's sample does not depend on how the seeds are grouped, ordered or
// split across threads and partitions.
//
// A CscView and a FanoutSpec's weights point into memory they do not own (the PartitionStore's arrays, a
// weight tensor), which must outlive them. sample_in_edges() only reads the graph and appends to `out`; it uses
// thread-local scratch, so threads may sample the same view at once, each into its own SampledEdges. Errors are
// tessera::Error: a seed the partition does not own (naming seed and partition), or an edge type beyond those the
// request names.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/store/partition_store.h"

namespace tessera::sampling {

// Raw view of a partition's CSC (arrays are not owned).
struct CscView {
  const int64_t* indptr = nullptr;   // [num_nodes + 1]
  const int64_t* indices = nullptr;  // source node IDs (homogeneous)
  const int64_t* eids = nullptr;     // edge IDs, or null when edge IDs are first_edge + position
  int64_t first_edge = 0;
  int64_t first_node = 0;            // homogeneous ID of local node 0
  int64_t num_nodes = 0;
  int part = 0;                      // for error messages
  // Edge type per position, or null with one edge type. Each node's in-edges
  // are sorted by type (the partitioner writes them so), which is what lets
  // per-type sampling find a type's edges by binary search.
  const int32_t* etypes = nullptr;
};
CscView csc_view(const store::PartitionStore& partition);

struct FanoutSpec {
  int64_t fanout = -1;  // -1: every in-edge (across all edge types)
  // Per edge type (DGL's sample_etype_neighbors): when not empty, each seed
  // draws etype_fanouts[k] of its in-edges of type k and `fanout` is unused.
  std::vector<int64_t> etype_fanouts;
  bool replace = false;
  uint64_t key = 0;     // fixes the random choices
  // Optional edge weights (sampling probability up to scale), one entry per
  // edge type, indexed by that type: an edge of type k and ID e weighs
  // weights[k].values[e - weights[k].offset], or 1 when values is null (a
  // type without the feature, as DGL samples it). Non-negative; zero is
  // never drawn. Empty: uniform.
  struct EdgeWeights {
    const float* values = nullptr;
    int64_t offset = 0;
  };
  std::vector<EdgeWeights> weights;
};

// Sampled in-edges, seed after seed: counts[i] edges of seed i, their
// sources and edge IDs appended to src / eids, and their edge types to
// etypes when the graph has several.
struct SampledEdges {
  std::vector<int64_t> counts, src, eids;
  std::vector<int32_t> etypes;
  void clear() {
    counts.clear();
    src.clear();
    eids.clear();
    etypes.clear();
  }
};

// Appends the sample of `seeds` (homogeneous IDs the view's partition owns;
// others throw an Error naming the seed and partition) to `out`.
void sample_in_edges(const CscView& graph, const int64_t* seeds, int64_t count, const FanoutSpec& spec,
                     SampledEdges* out);

}  // namespace tessera::sampling
