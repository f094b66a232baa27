// Single-process sampling throughput (issue 4's benchmark (a)): mini-batches
// per second of 2-layer neighbour sampling (fan-out 10,25, batch 1000) over
// a 1-partition graph in standalone mode, with N sampler threads, sampling
// only and sampling + feature/label fetch. Prints one table.
// Usage: bench_sampling PART_CONFIG [--samplers N] [--batches B]
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/base/timer.h"
#include "standalone_sampling.h"

namespace distributed = tessera::distributed;
namespace sampling = tessera::sampling;

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_sampling PART_CONFIG [--samplers N] [--batches B]\n");
    return 2;
  }
  int samplers = 2;
  int64_t batches = 200;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--samplers") samplers = std::atoi(argv[i + 1]);
    if (flag == "--batches") batches = std::atoll(argv[i + 1]);
  }
  try {
    tessera::bench::StandaloneSampling data(argv[1], 0);
    distributed::Context* ctx = data.ctx.get();
    const std::vector<int64_t>& train = data.train;
    const sampling::DistNeighborSampler& sampler = data.sampler;

    fmt::print("| workload | samplers | batches | time (s) | mini-batches/s | sampled edges/s | input nodes/batch | peak RSS (MB) |\n");
    fmt::print("|---|---|---|---|---|---|---|---|\n");
    for (const bool fetch : {false, true}) {
      sampling::LoaderOptions lo;
      lo.batch_size = 1000;
      lo.num_samplers = samplers;
      lo.seed = 1;
      if (!fetch) lo.feature = lo.label = "";
      sampling::DistDataLoader loader(*ctx, sampler, train, lo);
      // Warm up first (page tables of the mapped partition, allocator
      // arenas): the table reports the steady state.
      {
        loader.start_epoch(1000);
        sampling::MiniBatch batch;
        for (int i = 0; i < 100 && loader.next(&batch); ++i) {
        }
      }
      int64_t done = 0, edges = 0, inputs = 0;
      tessera::Timer timer;
      for (int epoch = 0; done < batches; ++epoch) {
        loader.start_epoch(epoch);
        sampling::MiniBatch batch;
        while (done < batches && loader.next(&batch)) {
          ++done;
          for (const auto& b : batch.blocks) edges += b.num_edges();
          inputs += batch.blocks.front().num_src();
        }
      }
      const double s = timer.seconds();
      fmt::print("| {} | {} | {} | {:.2f} | {:.0f} | {:.3g} | {} | {:.0f} |\n",
                 fetch ? "sample + fetch features, labels" : "sample only", samplers, done, s, done / s,
                 edges / s, inputs / done, tessera::peak_rss_bytes() / 1e6);
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_sampling: error: {}\n", e.what());
    return 1;
  }
}
