// Where a trainer's time went, per phase, over some steps: what the epoch records, the log lines and the final
// record report (EpochLoop, link prediction's task). Plain data; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/sampling/data_loader.h"
#include "tessera/train/gradient_step.h"

namespace tessera::train {

// Time a trainer spent per phase over some steps. Sampling and fetching run
// on sampler threads when there are any; `wait` is what the trainer itself
// lost waiting for batches; `sparse` is the push of embedding gradients.
struct PhaseTimes {
  double sample = 0, fetch = 0, wait = 0, compute = 0, allreduce = 0, sparse = 0;
  // CPU time of the trainer's thread over its steps: compute without the
  // time other processes held the core, plus the all-reduce's own share
  // (allreduce_cpu; ZeroMQ's I/O threads do the sockets' encryption), so
  // that step_cpu - allreduce_cpu is compute's CPU time.
  double step_cpu = 0, allreduce_cpu = 0;
  // The same for the sampler threads' sampling and fetch: what a batch
  // cost them, without the time the host's other work held their core.
  double sample_cpu = 0, fetch_cpu = 0;
  int64_t steps = 0, seeds = 0, edges = 0, correct = 0;
  double loss = 0;
  // Per layer, the blocks' sources, destinations and edges summed over the
  // steps: the shapes the step ran at, reported as means (mean_blocks) so
  // that a step's bound can be taken at this trainer's own shapes, which
  // differ between partitions (bench/sage.sh).
  struct BlockSums {
    double src = 0, dst = 0, edges = 0;
  };
  std::vector<BlockSums> blocks;
  void add_batch(const sampling::MiniBatch& b);
  // A training step: its batch, the wait for it, the step (with its sparse update).
  void add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double step_cpu_s);
  void add(const PhaseTimes& o);
  std::string split() const;  // "sample 1.2s fetch ..." for logs
  // The phase times as metrics fields (sample_s, fetch_s, ...).
  nlohmann::json times() const;
};

}  // namespace tessera::train
