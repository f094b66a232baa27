// Before PT-Scotch sees a graph, the edges of its high-degree nodes are sampled: each edge {u, v} is kept with
// probability p = min(1, T / deg(u), T / deg(v)) and, when kept, weighs round(1 / p), so that no node shows
// PT-Scotch much more than T neighbours while the cut it minimises stays, in expectation, the real cut.
//
// Why: PT-Scotch's matching-based coarsening merges few of a hub's edges, so on power-law graphs its coarse graphs
// keep nearly all the edges, and its sequential stages hold them on every rank at about 120 bytes per adjacency
// entry (RMAT 200k nodes / 4M edges on 2 ranks: 0.9 GB per rank, as much as one process partitioning it all; RMAT
// 1M / 20M on 3 ranks passed 3 GB on one rank before it was stopped). Its band refinement (sequential
// Fiduccia-Mattheyses on every rank) also grew quadratically with the edges it sees when splitting into 3.
// T = 32, measured on this host with 3 ranks (RMAT 1M / 20M; products-like 500k / 5M; METIS 61.7% and 10.3%):
//   T = 16: RMAT 7 s, cut 65.4%; products-like cut 14.4%
//   T = 32: RMAT 27 s, cut 65.1%; products-like cut 12.1%
//   T = 64: RMAT over 150 s (the refinement); products-like cut 11.3%
// RMAT 1M / 20M goes from 37M adjacency entries to about 2M; nodes of a products-like graph rarely reach T.
#pragma once
#pragma once

#include <cstdint>
#include <functional>

#include "partition/mpi/mpi_world.h"
#include "partition/mpi/scotch_partition.h"

namespace tessera {

constexpr int64_t kSampledDegree = 32;

// Collective. `graph` holds this rank's nodes [first, ...) in global IDs, owner(v) the rank of node v. Drops the
// edges not sampled (from both ends alike: the choice hashes the pair) and fills graph->edge_weights. Returns the
// number of adjacency entries dropped on all ranks.
int64_t sample_hub_edges(const MpiWorld& world, LocalGraph* graph, int64_t first, const std::function<int(int64_t)>& owner,
                         int64_t max_degree, uint64_t seed);

}  // namespace tessera
