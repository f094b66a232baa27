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
//     blocked node of better gain: quadratic in the band. RMAT 1M nodes / 20M edges on 3 ranks: unlimited, over
//     10 minutes; limit 60k, 14 s and a 36.7% cut; 100k, 42 s and 29.6%; METIS into 3 parts cuts 34.4%.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

inline constexpr double kScotchDefaultImbalance = 0.03;
inline constexpr int64_t kBandFmLimit = 100000;

std::string dgraph_map_strategy(int ranks, double imbalance);

}  // namespace tessera
