// Distributed graph partitioning with PT-Scotch (SCOTCH_dgraphPart): each rank passes its slice of an undirected
// graph, vertices [first, first + count) in global IDs with their adjacency lists, and gets the part of each.
#pragma once

#include <cstdint>
#include <vector>

#include "partition/mpi/mpi_world.h"

namespace tessera {

struct LocalGraph {
  std::vector<int64_t> xadj;     // count + 1 offsets into adjncy
  std::vector<int64_t> adjncy;   // global neighbour IDs, no self-loops, no duplicates, both directions present
  std::vector<int64_t> weights;  // one vertex weight each (PT-Scotch balances a single weight)
  std::vector<int64_t> edge_weights;  // one per adjncy entry, equal at both ends of an edge; empty: all 1
};

// Collective. Fails naming the library's limit when its index type is
// narrower than the graph needs, or when PT-Scotch reports an error. A part
// may come back empty when `imbalance` allows it; the caller checks the end result.
std::vector<int32_t> scotch_partition(const MpiWorld& world, LocalGraph* graph, int parts, uint64_t seed,
                                      double imbalance);

}  // namespace tessera
