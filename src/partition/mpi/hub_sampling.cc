#include "partition/mpi/hub_sampling.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tessera {
namespace {

// A uniform number in [0, 1) that both ends of an edge compute alike.
double edge_coin(int64_t a, int64_t b, uint64_t seed) {
  uint64_t x = static_cast<uint64_t>(std::min(a, b)) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(std::max(a, b)) ^
               (seed * 0xD1B54A32D192ED03ull);
  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace

int64_t sample_hub_edges(const MpiWorld& world, LocalGraph* g, int64_t first, const std::function<int(int64_t)>& owner,
                         int64_t max_degree, uint64_t seed) {
  const int64_t count = static_cast<int64_t>(g->xadj.size()) - 1;
  auto degree = [&](int64_t local) { return g->xadj[local + 1] - g->xadj[local]; };
  int64_t local_max = 0;
  for (int64_t i = 0; i < count; ++i) local_max = std::max(local_max, degree(i));
  g->edge_weights.clear();
  if (world.max(local_max) <= max_degree) return 0;  // nothing to sample: PT-Scotch gets the graph as it is

  std::vector<int64_t> neighbour_degree = g->adjncy;
  lookup_in_place(world, &neighbour_degree, owner, [&](int64_t v) { return degree(v - first); });
  int64_t write = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t begin = g->xadj[i], end = g->xadj[i + 1];
    g->xadj[i] = write;
    for (int64_t a = begin; a < end; ++a) {
      const int64_t larger = std::max(end - begin, neighbour_degree[a]);
      const double p = larger <= max_degree ? 1.0 : static_cast<double>(max_degree) / static_cast<double>(larger);
      if (p < 1.0 && edge_coin(first + i, g->adjncy[a], seed) >= p) continue;
      g->adjncy[write] = g->adjncy[a];
      neighbour_degree[write] = std::max<int64_t>(1, std::llround(1.0 / p));  // reused for the weights
      ++write;
    }
  }
  g->xadj[count] = write;
  const int64_t dropped = static_cast<int64_t>(g->adjncy.size()) - write;
  g->adjncy.resize(write);
  g->adjncy.shrink_to_fit();
  neighbour_degree.resize(write);
  neighbour_degree.shrink_to_fit();
  g->edge_weights = std::move(neighbour_degree);
  return world.sum(dropped);
}

}  // namespace tessera
