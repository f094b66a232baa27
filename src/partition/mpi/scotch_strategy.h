// The strategy PT-Scotch partitions with, as a string in SCOTCH_stratDgraphMap's syntax.
//
// At the usual 3% it is SCOTCH_STRATSPEED's own (what SCOTCH_stratDgraphMapBuild writes in Scotch 7.0.3, checked
// against it for 1 to 64 ranks), written
// out so that two of its numbers can follow the imbalance the caller allows. Allowing more is how the caller says
// that weight placed after PT-Scotch will even the parts out (periphery_fold.h). Then:
//   - the band FM refinement aims at a third of that imbalance, as SPEED's 1% is a third of its 3%. Left at 1%, it
//     spends its moves restoring a balance nobody asked for, one unit-weight node at a time;
//   - the band FM runs only on bands of fewer than kBandFmLimit nodes; larger ones get diffusion and the exactifier.
//     With room to move, the FM runs to the edge of its balance window on a power-law graph (moving a node to the
//     hubs' side always cuts less) and then alternates one move back, one move forward, each move scanning every
//     blocked node of better gain: quadratic in the band. RMAT balanced on nodes (METIS cuts 34.4% into 3 parts of
//     1M nodes / 20M edges, 48.4% into 4 of 200k / 4M):
//       limit  |  1M, 3 ranks     |  200k, 4 ranks
//       40k    |  8.5 s, 39.7%    |  5.3 s, 41.4%
//       45k    |  11 s, 38.1%     |  32 s, 34.4%
//       100k   |  42 s, 29.6%     |  130 s, 34.9%
//       none   |  over 4 minutes  |
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

inline constexpr double kScotchDefaultImbalance = 0.03;
inline constexpr int64_t kBandFmLimit = 40000;

std::string dgraph_map_strategy(int ranks, double imbalance);

// The imbalance PT-Scotch may leave among the parts it sees when `placed_after_weight` of the graph's
// `total_weight` is placed after it, filling the lightest parts (periphery_fold.h): a part may then take up to an
// equal share of the whole, plus the usual 3%. On power-law graphs that weight is large (RMAT 1M / 20M balanced on
// nodes: 60%), and holding PT-Scotch to 3% of the rest forces the hubs apart, which METIS, seeing the whole graph,
// does not. PT-Scotch applies the ratio to each split of its recursive bisection, against that split's own
// targets, so a part may grow by it once per level: the ratio returned is the levels'th root of the growth
// allowed (a ratio taken as it is left 30k-node RMAT's first split of 3 parts unbalanced). It is at most 50%,
// so each split leaves each side at least half its target of the graph PT-Scotch sees: unbounded, two parts of
// RMAT 1M / 20M came back as every connected node in one and only isolated ones in the other, a 2.8% cut that
// balances nodes but leaves one machine nothing to train on.
double imbalance_with_room(int64_t total_weight, int64_t placed_after_weight, int parts);

}  // namespace tessera
