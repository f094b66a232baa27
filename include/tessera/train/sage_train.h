// `tessera train sage`: DistDGL's GraphSAGE node-classification example (examples/distributed/graphsage) as
// one native program. Every trainer samples mini-batches from its share of the training nodes, fetches their
// features, runs GraphSAGE, and all-reduces gradients each step; validation and test accuracy come from
// sampled inference over each trainer's share.
//
// run_sage_training() joins the job itself (distributed::initialize: a server process serves and exits there)
// and owns everything it creates until it returns. It is collective: every trainer of the job runs it with the
// same options. Call it once, from the main thread (its loader may start sampler threads). It returns 0 on
// success; errors throw tessera::Error naming the flag (--aggregator, fanouts) or the file (a graph with
// several node types, features that are not float32 vectors), or come from a peer's failure.
#pragma once

#include <string>

#include "tessera/train/node_train_options.h"

namespace tessera::train {

struct SageTrainOptions : NodeTrainOptions, FeatureCacheOptions {
  std::string aggregator = "mean";  // --aggregator: mean | gcn
  bool replace = false;             // --replace: sample neighbours with replacement
  // DGL's graphsage example: 20 epochs, fanout 10,25, all neighbours at evaluation, ...
  SageTrainOptions() : NodeTrainOptions(20, {10, 25}, {-1}, 1000, 10000, 5, 0.003, 0.5) {}
};

// Runs the job; returns the process exit code. Errors throw tessera::Error.
int run_sage_training(const SageTrainOptions& options);

}  // namespace tessera::train
