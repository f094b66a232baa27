#include "partition/distributed/scotch_strategy.h"

#include <algorithm>

#include <fmt/format.h>

namespace tessera {

std::string dgraph_map_strategy(int ranks, double imbalance) {
  const double k = imbalance;
  const bool room = imbalance > kScotchDefaultImbalance;
  const double band_fm_balance = room ? imbalance / 3 : 0.01;

  // Sequential multilevel bipartitioning, for the graphs small enough to gather on one rank.
  const std::string fm = fmt::format("f{{move=80,pass=-1,bal={},type=b}}", k);
  const std::string sequential = fmt::format(
      "m{{asc=b{{bnd=(d{{pass=40,type=b}}|){0},org={0},width=3}},low=h{{pass=10}}{0},vert=80,rat=0.8}}", fm);

  // Refinement of each uncoarsened distributed level, on the band around its cut gathered on every rank.
  std::string band_fm = fmt::format("q{{strat=f{{move=80,pass=-1,bal={},type=b}}}}", band_fm_balance);
  // PT-Scotch 7.0.3's parser crashes on a condition with an else branch; without one it is fine.
  if (room) band_fm = fmt::format("(/(vert<{})?{};)", kBandFmLimit, band_fm);
  const std::string refine = fmt::format("{}x{{sbbt=5,bal={}}}", band_fm, k);
  const std::string ascent = fmt::format("b{{width=3,bnd=(d{{pass=40,dif=1,rem=0,type=b}}|){0},org={0}}}", refine);

  // Coarsening stops, and the graph is gathered for the sequential stages, below this many nodes.
  const int64_t coarsest = std::clamp<int64_t>(int64_t{2000} * ranks, 10000, 100000);
  return fmt::format(
      "r{{sep=m{{asc={0},low=q{{strat={1}}},seq=q{{strat={1}}},pass=5,vert={3},dvert=1000,fold=d,rat=0.8}},"
      "seq=r{{job=t,bal={2},map=t,poli=S,sep={1}}},bal={2}}}",
      ascent, sequential, k, coarsest);
}

}  // namespace tessera
