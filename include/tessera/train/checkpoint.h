// The checkpoints of every training task (train sage, train rgcn, kge train, a user's loop): one format, one
// code path. A task says what it keeps in a CheckpointState; TrainingCheckpoints writes it every N units
// (epochs or steps) and finds the newest one to resume from.
//
// Every trainer that keeps state of its own (a dense model and its optimizer, its random state) writes it in
// <dir>/trainer-<rank>/<unit>-<N>/; a task whose trainers are replicas of trainer 0 (KGE's relations) lets
// trainer 0 write alone. The tensors the servers hold (DistEmbedding rows and their sparse-optimizer state) are
// written by the servers that hold them, in <dir>/server-<machine>/ (tessera/distributed/dist_checkpoint.h).
// Each share is published by its own manifest (tessera/io/checkpoints.h); a job resumes from the newest N whose
// every share is intact, so processes killed at different moments of a save still resume together, from the
// previous checkpoint.
//
// Contract: resume() and after() are collective (every trainer calls them in the same order); without a
// Context (one process, no servers) they are local. Errors are tessera::Error naming the flag, directory or
// file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/io/checkpoints.h"

namespace tessera::distributed {
class Context;
}  // namespace tessera::distributed

namespace tessera::run {
class RunLog;
}  // namespace tessera::run

namespace torch {
namespace nn {
class Module;
}  // namespace nn
namespace optim {
class Optimizer;
}  // namespace optim
}  // namespace torch

namespace tessera::train {

// The checkpoint flags of the built-in trainers.
struct CheckpointOptions {
  int64_t every = 1;   // --checkpoint-every (epochs) / --checkpoint_interval (steps): 0 means none
  std::string dir;     // --checkpoint-dir: "" means the trainer's default
  int keep = 2;        // --keep-checkpoints
  bool resume = false;  // --resume (automatic when the launcher restarts the job: TESSERA_RESTART)
};

// Fails naming the flag when a value is out of range.
void check(const CheckpointOptions& options);
// --resume, or a restart by the launcher.
bool resuming(const CheckpointOptions& options);
// --checkpoint-dir, or <out_dir>/checkpoints (the node-classification trainers' default).
std::string checkpoint_dir(const CheckpointOptions& options, const std::string& out_dir);

// What a task keeps in its checkpoints and how it writes and reads it.
struct CheckpointState {
  std::string unit = "epoch";  // what N counts: "epoch" or "step"
  // true: every trainer writes its own share; false: trainer 0 alone (the others are replicas of it).
  bool every_trainer = true;
  // The tensors on the servers (SparseOptimizer::tensors()); none for a dense model.
  std::vector<std::string> server_tensors;
  // This trainer's files into / from a checkpoint's directory.
  std::function<void(const std::string& dir)> save, load;
  // Before a save (flush sparse updates, so the servers hold every one); may be empty.
  std::function<void()> before_save;
  // Collective, after every share is loaded (give the replicas trainer 0's state); may be empty.
  std::function<void()> after_load;
};

// A dense model, its optimizer and the default random generator, in
// model.pt, optimizer.pt and rng.pt. Both must outlive the state.
CheckpointState dense_state(torch::nn::Module& model, torch::optim::Optimizer& optimizer);

class TrainingCheckpoints {
 public:
  // `ctx`: the job (nullptr: one process without servers); `dir`: the
  // checkpoints' directory (made absolute: the servers write relative to it
  // too); `log` gets a line per checkpoint (its size and time) and on resume.
  TrainingCheckpoints(distributed::Context* ctx, const CheckpointOptions& options, const std::string& dir, run::RunLog& log,
                      CheckpointState state);

  // Collective. With --resume or after a restart: loads the newest complete
  // checkpoint, logs it, and returns its N; otherwise 0. `total` is the run's
  // length in units and `total_flag` the flag that set it (a checkpoint at or
  // past it leaves nothing to train: an error). An explicit --resume where no
  // trainer has ever written a checkpoint is an error; checkpoints that are
  // all damaged or incomplete are logged and the run starts over.
  int64_t resume(int64_t total, const std::string& total_flag);
  // Collective, after unit `done` (counted from 1): writes a checkpoint when
  // one is due (none after the last unit).
  void after(int64_t done, int64_t total);

  const std::string& dir() const { return dir_; }
  int64_t every() const { return options_.every; }  // units between checkpoints; 0: none

 private:
  int rank() const;
  void barrier();

  distributed::Context* ctx_;
  run::RunLog* log_;
  CheckpointOptions options_;
  std::string dir_;
  CheckpointState state_;
  Checkpoints mine_;
};

}  // namespace tessera::train
