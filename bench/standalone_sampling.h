// What the single-process benches share: a 1-partition graph opened in
// standalone mode, its training nodes and GraphSAGE's sampler (fan-out
// 10,25), as bench/sage.sh's job samples them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/node_split.h"
#include "tessera/sampling/dist_sampler.h"

namespace tessera::bench {

struct StandaloneSampling {
  // threads: intra-op threads (0: the library's default).
  StandaloneSampling(const std::string& part_config, int threads)
      : ctx(open(part_config, threads)),
        graph(*ctx),
        train(distributed::node_split(*ctx, graph.ndata("train_mask"))),
        sampler(*ctx, fanouts()) {}

  std::unique_ptr<distributed::Context> ctx;
  distributed::DistGraph graph;
  std::vector<int64_t> train;
  sampling::DistNeighborSampler sampler;

 private:
  static std::unique_ptr<distributed::Context> open(const std::string& part_config, int threads) {
    distributed::InitOptions init;
    init.standalone = true;
    init.part_config = part_config;
    init.num_threads = threads;
    return distributed::initialize(init);
  }
  static sampling::SamplerOptions fanouts() {
    sampling::SamplerOptions options;
    options.fanouts = {10, 25};
    return options;
  }
};

}  // namespace tessera::bench
