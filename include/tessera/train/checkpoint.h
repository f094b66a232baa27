// A node-classification trainer's checkpoints (train sage, train rgcn, or a user's loop): every trainer keeps its
// own dense model, optimizer state and random state in <dir>/trainer-<rank>/ (they are replicated, and a
// trainer's random state is its own), and when the model trains DistEmbeddings their rows and sparse-optimizer
// state are written by the servers that hold them, in <dir>/server-<machine>/ (tessera/distributed/
// dist_checkpoint.h). Each share is published by its own manifest (tessera/io/checkpoints.h); a job resumes
// from the newest epoch whose every share is intact, so processes killed at different moments of a save still
// resume together, from the previous checkpoint.
//
// Errors are tessera::Error naming the flag, directory or file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/io/checkpoints.h"

namespace tessera::distributed {
class Context;
}  // namespace tessera::distributed

namespace torch {
namespace nn {
class Module;
}  // namespace nn
namespace optim {
class Optimizer;
}  // namespace optim
}  // namespace torch

namespace tessera::train {

class RunLog;

// The checkpoint flags of the built-in trainers.
struct CheckpointOptions {
  int every = 1;       // --checkpoint-every: epochs between checkpoints; 0: none
  std::string dir;     // --checkpoint-dir: "" means <out>/checkpoints
  int keep = 2;        // --keep-checkpoints
  bool resume = false;  // --resume (automatic when the launcher restarts the job: TESSERA_RESTART)
};

// Fails naming the flag when a value is out of range.
void check(const CheckpointOptions& options);
// --resume, or a restart by the launcher.
bool resuming(const CheckpointOptions& options);

// Collective: the newest epoch in every trainer's `intact` list, or 0 when
// there is none (start from the beginning).
int64_t agree_on_checkpoint(distributed::Context& ctx, const std::vector<int64_t>& intact);

class TrainingCheckpoints {
 public:
  // `server_tensors`: the DistEmbeddings and optimizer state to checkpoint
  // on the servers (SparseOptimizer::tensors()); none for a dense model.
  // `log` gets a line per checkpoint (its size and time) and on resume.
  TrainingCheckpoints(distributed::Context& ctx, const CheckpointOptions& options, const std::string& out_dir,
                      RunLog& log, std::vector<std::string> server_tensors = {});

  // Collective. With --resume or after a restart: loads the newest complete
  // checkpoint into `model`, `optimizer`, the random state and the servers'
  // tensors, logs it, and returns its epochs done; otherwise 0.
  int resume(torch::nn::Module& model, torch::optim::Optimizer& optimizer, int num_epochs);
  // Collective, after epoch `done` (counted from 1): writes a checkpoint when
  // one is due (none after the last epoch). Sparse updates must have been
  // flushed.
  void after_epoch(int done, int num_epochs, torch::nn::Module& model, torch::optim::Optimizer& optimizer);

  const std::string& dir() const { return dir_; }

 private:
  distributed::Context* ctx_;
  RunLog* log_;
  CheckpointOptions options_;
  std::string dir_;  // absolute: the servers write relative to it too
  Checkpoints mine_;
  std::vector<std::string> server_tensors_;
};

}  // namespace tessera::train
