// Node classification's epoch driver on the one TrainLoop (train_loop.h): a step function run over a
// DistDataLoader's batches, epoch by epoch, with the progress lines, metrics records, evaluation and checkpoints
// every node trainer has, built-in or a user's own (Marius's Trainer).
//
// Contract: EpochLoop::run and finish are collective (every trainer runs the same loop with the same options),
// on the thread that created the loop; one loop per thread. Errors are tessera::Error for bad options (naming the
// flag) or what the step function throws, with the step named around it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tessera/distributed/context.h"
#include "tessera/run/run_log.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/gradient_step.h"
#include "tessera/train/phase_times.h"
#include "tessera/train/train_loop.h"

namespace tessera::train {

// What a training run reports at the end, whatever the model.
struct RunSummary {
  double val_acc = -1, test_acc = -1, train_acc = 0, loss = 0;
  int epochs = 0;
  int64_t steps_per_epoch = 0;
  int trainers = 0;
  double total_epoch_s = 0;  // summed over epochs, evaluation excluded
  std::string model_dir;
  nlohmann::json extra = nlohmann::json::object();  // trainer-specific fields of the final record
};

// How an EpochLoop runs.
struct EpochLoopOptions {
  EpochLoopOptions(int epochs = 1, int log_every_steps = 20, int eval_every_epochs = 1)
      : num_epochs(epochs), log_every(log_every_steps), eval_every(eval_every_epochs) {}
  int num_epochs = 1;
  int log_every = 20;  // steps between progress lines
  int eval_every = 1;  // epochs between evaluations; the last epoch always evaluates
  int first_epoch = 0;  // epochs already done (a resumed run starts after them)
  // Resumes from and writes checkpoints (dense_state() of the model, and
  // the servers' tensors); first_epoch is then the checkpoint's. May be null.
  TrainingCheckpoints* checkpoints = nullptr;
  // Called after each epoch (and its checkpoint) with the number of epochs done.
  std::function<void(int epochs_done)> after_epoch;
};
// Fails naming --num-epochs, --log-every or --eval-every when one is below 1.
void check(const EpochLoopOptions& options);

// run() does, for every epoch: start the loader's epoch, call `step` on
// each batch (timing the wait for it), draw progress, log every log_every
// steps, then write the epoch's metrics record (loss, train accuracy,
// throughput, the time split, host CPU use) and, every eval_every epochs,
// call `evaluate` for (validation, test) accuracy. Each record holds
// "per_trainer": every trainer's own throughput, time split and peak RSS,
// gathered from all of them. Only the logging trainer's run::RunLog writes;
// every trainer runs the same loop.
class EpochLoop {
 public:
  using StepFn = std::function<StepResult(const sampling::MiniBatch& batch)>;
  using EvalFn = std::function<std::pair<double, double>()>;  // (val acc, test acc); -1 for none
  // `ctx` and `log` must outlive the loop.
  EpochLoop(distributed::Context& ctx, run::RunLog& log, EpochLoopOptions options);

  // `steps_per_epoch`: what the loader yields per epoch (equalize_steps()).
  // Returns the run's summary; totals() holds its summed phase times.
  RunSummary run(sampling::DistDataLoader& loader, int64_t steps_per_epoch, const StepFn& step,
                 const EvalFn& evaluate);
  // Ends the job (Context::finalize) and writes the final record of
  // `summary` (run()'s, with model_dir set if there is one) as the run's
  // last metrics line.
  void finish(const RunSummary& summary);

  const PhaseTimes& totals() const { return all_; }
  double host_cpu_busy() const { return busy_s_ / std::max(1e-9, summary_.total_epoch_s); }

 private:
  distributed::Context& ctx_;
  int num_epochs_;
  TrainLoop loop_;
  PhaseTimes all_;
  RunSummary summary_;
  double busy_s_ = 0;
};

// The final record's shared fields (accuracies, epoch time, throughput,
// phase times, host CPU use; finish() adds the peak RSS); each trainer adds its own.
nlohmann::json final_record(const RunSummary& summary, const EpochLoop& loop);

}  // namespace tessera::train
