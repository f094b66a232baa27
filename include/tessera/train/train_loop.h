// The one training loop every task runs on (Marius's Trainer::train()): node classification by epochs over a
// DistDataLoader (train sage, train rgcn, EpochLoop in a user's program) and KGE by steps over triple samplers
// (kge train). The loop owns the schedule — when to log, evaluate, merge replicas and checkpoint — the progress
// bar, the training clock (evaluation and checkpoints excluded), the one metrics writer (run::RunLog) and the one
// checkpoint path (TrainingCheckpoints); a TrainTask owns its batches, its step and what its records say.
//
// Contract: run() is collective when the task is (every trainer runs the same loop with the same options), and
// runs on the thread that created the loop. Errors are what the task throws, with the step named around them,
// and tessera::Error for bad options (naming the flag).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/train/checkpoint.h"
#include "tessera/run/run_log.h"

namespace tessera::train {

// What a task says at a point of the run: a metrics record (null: none) and
// a line for the log ("" for none).
struct Report {
  nlohmann::json record;
  std::string line;
};

// A task the loop trains. Epoch runs implement start_epoch() and end_epoch();
// step runs leave them as they are.
class TrainTask {
 public:
  virtual ~TrainTask() = default;
  // Once, before training, with the units a resumed run has already done.
  virtual void begin(int64_t units_done) { (void)units_done; }
  // Epoch runs: starts epoch `epoch` (from 0); returns its number of steps.
  virtual int64_t start_epoch(int64_t epoch) {
    (void)epoch;
    return 0;
  }
  // Runs up to `steps` steps and returns how many ran: fewer only when an
  // epoch ends. A task that runs its steps on the calling thread calls
  // `stepped` after each (epoch runs draw their progress bar with it); one
  // that runs them on worker threads (KGE) need not.
  virtual int64_t train(int64_t steps, const std::function<void()>& stepped) = 0;
  // At every TrainLoopOptions::sync_every steps and at the end: brings
  // replicas together (KGE's relations).
  virtual void sync() {}
  // Every log_every steps: what the steps since the last report did, in
  // `seconds` of training.
  virtual Report log_window(int64_t step, double seconds) = 0;
  // Epoch runs, after each epoch: its record and line; `cpu_busy` is the
  // host's busy fraction over it.
  virtual Report end_epoch(int64_t epoch, double seconds, double cpu_busy) {
    (void)epoch, (void)seconds, (void)cpu_busy;
    return {};
  }
  // Whether evaluate() has anything to do (it is then called every
  // eval_every units and after the last one).
  virtual bool evaluates() const { return true; }
  // Evaluation after `units_done` units: fields for the point's record and a line.
  virtual Report evaluate(int64_t units_done) = 0;
};

struct TrainLoopOptions {
  enum class Unit { kEpoch, kStep };
  Unit unit = Unit::kEpoch;
  int64_t total = 1;       // epochs or steps to train
  std::string total_flag = "--num-epochs";  // the flag that set `total`, for errors
  int64_t log_every = 20;  // steps between log windows (counted within each epoch of an epoch run)
  int64_t eval_every = 1;  // units between evaluations; the last unit always evaluates
  int64_t sync_every = 0;  // steps between TrainTask::sync(); 0: only at the end
  int64_t first = 0;       // units already done, when not resumed from `checkpoints`
  TrainingCheckpoints* checkpoints = nullptr;  // resumes from and writes checkpoints; may be null
  // After each unit (counted from 1), after its checkpoint.
  std::function<void(int64_t units_done)> after_unit;
};

// Fails naming the flag when `total`, `log_every` or `eval_every` is below 1.
void check(const TrainLoopOptions& options);

class TrainLoop {
 public:
  // `log` must outlive the loop.
  TrainLoop(run::RunLog& log, TrainLoopOptions options);

  // Resumes from the checkpoints (if any), then trains `task` to the end.
  // Writes: the log windows; in epoch runs one record per epoch, with the
  // evaluation's fields when one is due; in step runs the evaluation's
  // fields join the log window's record of the same step, or stand alone
  // with "step". Lines: an epoch's line carries its evaluation's; a step
  // run's evaluation has its own line.
  void run(TrainTask& task);
  // Writes the run's final record (with the peak RSS added) as the last line.
  void finish(nlohmann::json record);

  int64_t first_unit() const { return first_; }  // where run() started
  double train_seconds() const { return train_s_; }  // evaluation and checkpoints excluded

 private:
  void run_epochs(TrainTask& task);
  void run_steps(TrainTask& task);
  Report evaluate(TrainTask& task, int64_t units_done);
  void after_unit(int64_t units_done);

  run::RunLog& log_;
  TrainLoopOptions options_;
  int64_t first_ = 0;
  double train_s_ = 0;
};

}  // namespace tessera::train
