// `tessera train rgcn`: DistDGL's R-GCN entity-classification example
// (examples/distributed/rgcn, ogbn-mag) as one native program. Trainers
// sample heterogeneous mini-batches of the labelled node type, project typed
// features where a type has them, learn an embedding per node of every
// featureless type (DistEmbedding rows updated by a sparse optimizer on the
// servers), run RelGraphConv layers, and all-reduce the dense gradients.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::train {

struct RgcnTrainOptions {
  std::string graph_name, dataset;
  std::string ip_config, part_config;  // part_config: also the standalone graph
  bool standalone = false;
  std::string predict_category;        // default: the one node type with labels
  int num_epochs = 3;
  int64_t num_hidden = 16;
  int num_layers = 2;
  int64_t num_bases = -1;              // -1: one weight per relation
  std::string fanout = "4,4";
  std::string validation_fanout;       // default: --fanout
  std::string fanout_mode = "total";   // total | per-etype
  int64_t batch_size = 100;
  int64_t eval_batch_size = 128;
  int log_every = 20;
  int eval_every = 1;
  double lr = 0.01;
  double sparse_lr = 0.01;
  std::string sparse_optimizer = "adam";  // adam | adagrad
  double dropout = 0;
  double l2norm = 0;                      // Adam weight decay on the dense weights
  bool self_loop = false;
  bool layer_norm = false;
  int num_samplers = -1;  // -1: TESSERA_NUM_SAMPLERS from the launcher, else 0
  uint64_t seed = 0;
  int num_threads = 0;
  std::string out_dir;  // default rgcn-<graph name>
  int64_t max_batches = -1;
};

// Runs the job; returns the process exit code. Errors throw tessera::Error.
int run_rgcn_training(const RgcnTrainOptions& options);

}  // namespace tessera::train
