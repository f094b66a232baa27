// Reshuffling: new node and edge IDs such that each partition owns one
// contiguous range per type, and the partitions' in-edge CSC arrays.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/dataset.h"
#include "tessera/partition/partition_config.h"

namespace tessera {

struct Reshuffled {
  std::vector<std::vector<IdRange>> node_map;  // [ntype][part]
  std::vector<std::vector<IdRange>> edge_map;  // [etype][part]
  std::vector<int64_t> orig_nid;  // new homogeneous node ID -> type-local original ID
  std::vector<int64_t> orig_eid;  // new edge ID -> type-local original edge ID
  // CSC over all new node IDs (each partition's slice is its local graph):
  // in-edges of node v are positions indptr[v] .. indptr[v+1].
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;  // new source node IDs
  std::vector<int64_t> eids;     // new edge IDs
  std::vector<int32_t> etypes;   // edge type ids (empty when there is one)
  int64_t cut_edges = 0;
};

Reshuffled reshuffle(const Dataset& dataset, const std::vector<int32_t>& part, int num_parts);

}  // namespace tessera
