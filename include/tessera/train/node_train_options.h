// The options every node-classification trainer shares (`tessera train sage`,
// `tessera train rgcn`, and programs written on the SDK that want the same
// command line). One spelling per concept: the canonical flag is named in
// each comment; DGL's spellings from both of its examples are aliases.
//
// Contract: plain data, no validation here; the trainers check values
// before they join a job and name the flag in the error.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tessera/sampling/fanouts.h"
#include "tessera/train/checkpoint.h"

namespace tessera::train {

struct NodeTrainOptions {
  NodeTrainOptions() = default;
  // The defaults that differ from one trainer to the next.
  NodeTrainOptions(int epochs, sampling::Fanouts fanout_, sampling::Fanouts eval_fanout_, int64_t batch, int64_t eval_batch,
                   int eval_every_, double lr_, double dropout_)
      : num_epochs(epochs), fanout(std::move(fanout_)), eval_fanout(std::move(eval_fanout_)), batch_size(batch),
        eval_batch_size(eval_batch), eval_every(eval_every_), lr(lr_), dropout(dropout_) {}

  std::string graph_name;              // --graph-name: checked against the partitioned graph
  std::string ip_config;               // --ip-config: under launch, must be the launcher's
  std::string part_config;             // --part-config: the graph (standalone), or the launcher's
  bool standalone = false;             // --standalone: one process, 1-partition graph
  int num_epochs = 1;                  // --num-epochs
  int64_t num_hidden = 16;             // --num-hidden
  int num_layers = 2;                  // --num-layers
  sampling::Fanouts fanout{10, 25};    // --fanout: per layer, input layer first; one value for all
  sampling::Fanouts eval_fanout;       // --eval-fanout: empty means --fanout
  int64_t batch_size = 1000;           // --batch-size
  int64_t eval_batch_size = 10000;     // --eval-batch-size
  int log_every = 20;                  // --log-every: steps between progress lines
  int eval_every = 1;                  // --eval-every: epochs between evaluations
  double lr = 0.01;                    // --lr: Adam on the dense weights
  double dropout = 0;                  // --dropout
  double weight_decay = 0;             // --weight-decay: Adam's L2 penalty on the dense weights
  int num_samplers = -1;               // --num-samplers: -1 means the launcher's, else 0
  uint64_t seed = 0;                   // --seed
  int num_threads = 0;                 // --num-threads: intra-op threads (0: InitOptions::num_threads's default)
  std::string out_dir;                 // --out: metrics.jsonl, model/ (default <model>-<graph name>)
  int64_t max_batches = -1;            // --max-batches: cap on steps per epoch (benchmarks)
  CheckpointOptions checkpoint;        // --checkpoint-every, --checkpoint-dir, --keep-checkpoints, --resume
};

// The remote-feature cache of the trainers that fetch one node feature
// (`train sage`, `train link`): each trainer keeps the rows of the other
// machines' nodes of largest in-degree (distributed/remote_row_cache.h).
struct FeatureCacheOptions {
  // --cache-remote-features: the share of every other machine's nodes, those
  // of largest in-degree, whose features each trainer keeps in memory.
  double cache_remote_features = 0.25;
  int64_t feature_cache_mb = 1024;  // --feature-cache-mb: the cache's cap per trainer
};

}  // namespace tessera::train
