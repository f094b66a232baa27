#include "partition/mpi/scotch_strategy.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tessera {

std::string dgraph_map_strategy(int ranks, double imbalance) {
  const bool room = imbalance > kScotchDefaultImbalance;
  // 0.01 written as SPEED writes it: 0.03 / 3 prints as 0.009999999999999998.
  const double band_fm_balance = room ? imbalance / 3 : 0.01;
  auto fm = [](double balance) { return fmt::format("f{{move=80,pass=-1,bal={},type=b}}", balance); };

  // Sequential multilevel bipartitioning, for the graphs small enough to gather on one rank.
  const std::string sequential = fmt::format(
      "m{{asc=b{{bnd=(d{{pass=40,type=b}}|){0},org={0},width=3}},low=h{{pass=10}}{0},vert=80,rat=0.8}}",
      fm(imbalance));

  // Refinement of each uncoarsened distributed level, on the band around its cut gathered on every rank.
  std::string band_fm = fmt::format("q{{strat={}}}", fm(band_fm_balance));
  // PT-Scotch 7.0.3's parser crashes on a condition with an else branch; without one it is fine.
  if (room) band_fm = fmt::format("(/(vert<{})?{};)", kBandFmLimit, band_fm);
  const std::string refine = fmt::format("{}x{{sbbt=5,bal={}}}", band_fm, imbalance);
  const std::string ascent = fmt::format("b{{width=3,bnd=(d{{pass=40,dif=1,rem=0,type=b}}|){0},org={0}}}", refine);

  // Coarsening stops, and the graph is gathered for the sequential stages, below this many nodes.
  const int64_t coarsest = std::clamp<int64_t>(int64_t{2000} * ranks, 10000, 100000);
  return fmt::format(
      "r{{sep=m{{asc={0},low=q{{strat={1}}},seq=q{{strat={1}}},pass=5,vert={3},dvert=1000,fold=d,rat=0.8}},"
      "seq=r{{job=t,bal={2},map=t,poli=S,sep={1}}},bal={2}}}",
      ascent, sequential, imbalance, coarsest);
}

double imbalance_with_room(int64_t total_weight, int64_t placed_after_weight, int parts) {
  const double kMaxImbalance = 0.5;
  const int64_t seen = total_weight - placed_after_weight;
  if (seen <= 0 || parts < 2) return kScotchDefaultImbalance;
  const double growth = static_cast<double>(total_weight) / static_cast<double>(seen) * (1 + kScotchDefaultImbalance);
  const int levels = static_cast<int>(std::ceil(std::log2(parts)));
  return std::clamp(std::pow(growth, 1.0 / levels) - 1, kScotchDefaultImbalance, kMaxImbalance);
}

}  // namespace tessera
