// `tessera train rgcn`: DistDGL's R-GCN entity-classification example (examples/distributed/rgcn, ogbn-mag)
// as one native program. Trainers sample heterogeneous mini-batches of the labelled node type, project typed
// features where a type has them, learn an embedding per node of every featureless type (DistEmbedding rows
// updated by a sparse optimizer on the servers), run RelGraphConv layers, and all-reduce the dense gradients.
//
// run_rgcn_training() joins the job itself (distributed::initialize: a server process serves and exits there)
// and owns everything it creates until it returns. It is collective: every trainer of the job runs it with the
// same options. Call it once, from the main thread (its loader may start sampler threads). It returns 0 on
// success; errors throw tessera::Error naming the flag (--fanout-mode, --sparse-optimizer, --predict-category)
// or the file, or come from a peer's failure reported by the collectives.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/train/node_train_options.h"

namespace tessera::train {

struct RgcnTrainOptions : NodeTrainOptions, FeatureCacheOptions {
  std::string dataset;                    // --dataset: informational, as in DGL
  std::string predict_category;           // default: the one node type with labels
  int64_t num_bases = -1;                 // -1: one weight per relation
  std::string fanout_mode = "total";      // total | per-etype
  double sparse_lr = 0.01;
  std::string sparse_optimizer = "adam";  // adam | adagrad
  bool self_loop = false;
  bool layer_norm = false;
  // DGL's rgcn example: 3 epochs, fanout 4,4 (also at evaluation), batch 100, ...
  RgcnTrainOptions() : NodeTrainOptions(3, {4, 4}, {}, 100, 128, 1, 0.01, 0) {}
};

// Runs the job; returns the process exit code. Errors throw tessera::Error.
int run_rgcn_training(const RgcnTrainOptions& options);

}  // namespace tessera::train
