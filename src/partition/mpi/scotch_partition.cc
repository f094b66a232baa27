#include "partition/mpi/scotch_partition.h"

#include <ptscotch.h>
#include <stdlib.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include "partition/mpi/scotch_strategy.h"
#include "tessera/base/error.h"

namespace tessera {
namespace {

// The index vectors are handed to PT-Scotch as they are, without a copy.
static_assert(sizeof(SCOTCH_Num) == sizeof(int64_t) || sizeof(SCOTCH_Num) == sizeof(int32_t));

template <typename T>
SCOTCH_Num* as_scotch(std::vector<T>* v) {
  static_assert(sizeof(T) == sizeof(int64_t));
  return reinterpret_cast<SCOTCH_Num*>(v->data());
}

}  // namespace

std::vector<int32_t> scotch_partition(const MpiWorld& world, LocalGraph* g, int parts, uint64_t seed,
                                      double imbalance) {
  const int64_t local_vertices = static_cast<int64_t>(g->xadj.size()) - 1;
  const int64_t local_arcs = static_cast<int64_t>(g->adjncy.size());
  const int64_t vertices = world.sum(local_vertices);
  const int64_t arcs = world.sum(local_arcs);
  int64_t weight = 0;
  for (int64_t w : g->weights) weight += w;
  weight = world.sum(weight);
  const int64_t limit = std::numeric_limits<SCOTCH_Num>::max();
  if (vertices >= limit || arcs >= limit || weight >= limit)
    fail("the graph has {} nodes, {} adjacency entries and a total vertex weight of {}, but this PT-Scotch was built "
         "with {}-bit indices (at most {}): install a build with 64-bit SCOTCH_Num (Debian's scotch-int64)",
         vertices, arcs, weight, 8 * sizeof(SCOTCH_Num), limit);
  if (sizeof(SCOTCH_Num) != sizeof(int64_t))
    fail("internal error: Tessera passes 64-bit indices, but this PT-Scotch uses {}-bit SCOTCH_Num",
         8 * sizeof(SCOTCH_Num));

  // PT-Scotch starts one thread per core in every rank: ranks sharing a
  // machine (tests, one-host runs) would run cores x ranks threads and
  // contend (RMAT 200k / 4M on 3 ranks of 2 cores: 162 s, against 37 s with
  // one thread each). A user's own SCOTCH_PTHREAD_NUMBER wins.
  if (std::getenv("SCOTCH_PTHREAD_NUMBER") == nullptr) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::string threads = std::to_string(std::max(1, cores / world.ranks_on_this_host()));
    ::setenv("SCOTCH_PTHREAD_NUMBER", threads.c_str(), 0);
  }
  SCOTCH_randomSeed(static_cast<SCOTCH_Num>(seed & 0x7fffffff));
  SCOTCH_randomReset();
  SCOTCH_Dgraph graph;
  if (SCOTCH_dgraphInit(&graph, world.comm()) != 0) fail("PT-Scotch could not initialise a distributed graph");
  SCOTCH_Strat strategy;
  SCOTCH_stratInit(&strategy);
  std::vector<int64_t> part(static_cast<size_t>(std::max<int64_t>(local_vertices, 1)));
  int status = SCOTCH_dgraphBuild(&graph, 0, local_vertices, local_vertices, as_scotch(&g->xadj), nullptr,
                                  as_scotch(&g->weights), nullptr, local_arcs, local_arcs, as_scotch(&g->adjncy),
                                  nullptr, g->edge_weights.empty() ? nullptr : as_scotch(&g->edge_weights));
  // An expert's own strategy string (SCOTCH_stratDgraphMap's syntax), for tuning on a new kind of graph; an empty
  // one counts as unset. Otherwise SPEED's, not QUALITY's: on a 200k-node / 4M-edge RMAT graph on 2 ranks QUALITY
  // took 190 s against SPEED's 20 s (METIS: 2 s); on a products-like graph the cuts were 11.3% and 11.6%.
  const char* env = std::getenv("TESSERA_SCOTCH_STRATEGY");
  const std::string custom = env == nullptr ? "" : env;
  const std::string text = custom.empty() ? dgraph_map_strategy(world.size(), imbalance) : custom;
  if (status == 0)
    status = SCOTCH_stratDgraphMap(&strategy, text.c_str()) == 0 ? 0 : 2;
  else
    status = 1;
  if (status == 0) status = SCOTCH_dgraphPart(&graph, parts, &strategy, as_scotch(&part)) == 0 ? 0 : 3;
  SCOTCH_stratExit(&strategy);
  SCOTCH_dgraphExit(&graph);
  // Every rank learns whether any failed, so all fail together.
  const int64_t worst = world.max(status);
  if (worst == 1) fail("PT-Scotch refused the distributed graph ({} nodes, {} adjacency entries)", vertices, arcs);
  if (worst == 2 && !custom.empty())
    fail("TESSERA_SCOTCH_STRATEGY: PT-Scotch rejected the strategy string '{}' (SCOTCH_stratDgraphMap syntax); "
         "unset it for the default", custom);
  if (worst == 2) fail("PT-Scotch rejected Tessera's own strategy string for {} parts: '{}'", parts, text);
  if (worst == 3) fail("PT-Scotch failed partitioning {} nodes into {} parts", vertices, parts);

  std::vector<int32_t> result(local_vertices);
  for (int64_t v = 0; v < local_vertices; ++v) {
    if (part[v] < 0 || part[v] >= parts) fail("PT-Scotch returned part {} outside [0, {})", part[v], parts);
    result[v] = static_cast<int32_t>(part[v]);
  }
  return result;
}

}  // namespace tessera
