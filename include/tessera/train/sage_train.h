// `tessera train sage`: DistDGL's GraphSAGE node-classification example
// (examples/distributed/graphsage) as one native program. Every trainer
// samples mini-batches from its share of the training nodes, fetches their
// features, runs GraphSAGE, and all-reduces gradients each step; validation
// and test accuracy come from sampled inference over each trainer's share.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::train {

struct SageTrainOptions {
  std::string graph_name;
  std::string ip_config, part_config;  // part_config: also the standalone graph
  bool standalone = false;
  int num_epochs = 20;
  int64_t num_hidden = 16;
  int num_layers = 2;
  std::string fan_out = "10,25";
  std::string eval_fan_out = "-1";  // one value applies to every layer; -1: all neighbours
  std::string aggregator = "mean";
  int64_t batch_size = 1000;
  int64_t batch_size_eval = 10000;
  int log_every = 20;
  int eval_every = 5;
  double lr = 0.003;
  double dropout = 0.5;
  double weight_decay = 0;  // Adam's L2 penalty
  int num_samplers = -1;  // -1: TESSERA_NUM_SAMPLERS from the launcher, else 0
  bool replace = false;
  uint64_t seed = 0;
  int num_threads = 0;  // intra-op threads (0: TESSERA_NUM_THREADS or 2)
  std::string out_dir;  // metrics.jsonl and model/ (default: sage-<graph name>)
  int64_t max_batches = -1;  // per epoch, for benchmarks (-1: all)
};

// Runs the job; returns the process exit code. Errors throw tessera::Error.
int run_sage_training(const SageTrainOptions& options);

}  // namespace tessera::train
