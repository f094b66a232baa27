// EpochLoop: node classification as a task on the one TrainLoop. The task
// runs a step function over a DistDataLoader and keeps the phase times the
// epoch records, the log lines and the final record report.
#include "tessera/train/epoch_loop.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "train/step_timing.h"

namespace tessera::train {
namespace {

TrainLoopOptions loop_options(const EpochLoopOptions& o) {
  check(o);
  TrainLoopOptions t;
  t.unit = TrainLoopOptions::Unit::kEpoch;
  t.total = o.num_epochs;
  t.total_flag = "--num-epochs";
  t.log_every = o.log_every;
  t.eval_every = o.eval_every;
  t.first = o.first_epoch;
  t.checkpoints = o.checkpoints;
  if (o.after_epoch) t.after_unit = [after = o.after_epoch](int64_t done) { after(static_cast<int>(done)); };
  return t;
}

class NodeClassificationTask final : public TrainTask {
 public:
  NodeClassificationTask(distributed::Context& ctx, sampling::DistDataLoader& loader, int64_t steps_per_epoch,
                         const EpochLoop::StepFn& step, const EpochLoop::EvalFn& evaluate)
      : ctx_(ctx), loader_(loader), steps_per_epoch_(steps_per_epoch), step_(step), evaluate_(evaluate) {}

  int64_t start_epoch(int64_t epoch) override {
    epoch_ = epoch;
    epoch_times_ = window_ = PhaseTimes{};
    loader_.start_epoch(static_cast<int>(epoch));
    return steps_per_epoch_;
  }

  int64_t train(int64_t steps, const std::function<void()>& stepped) override {
    return run_timed_steps(
        loader_, &batch_, steps,
        [&] {
          return fmt::format("training step {} of epoch {} on trainer {} (batch of {} seeds, {} input nodes)",
                             epoch_times_.steps + 1, epoch_, ctx_.rank(), batch_.seeds.size(),
                             batch_.blocks.empty() ? 0 : batch_.blocks.front().num_src());
        },
        [&] { return step_(batch_); }, {&epoch_times_, &window_}, stepped);
  }

  Report log_window(int64_t step, double) override {
    // Seconds of the trainer's own thread: the sampler threads' work overlaps it.
    const PhaseTimes& w = window_;
    const double secs = w.wait + w.compute + w.allreduce + w.sparse;
    Report r;
    r.line = fmt::format("Epoch {:05d} | Step {:05d} | Loss {:.4f} | Train Acc {:.4f} | Speed (seeds/s) {:.1f} | "
                         "Edges/s {:.3g} | {}",
                         epoch_, step, w.loss / w.steps, static_cast<double>(w.correct) / w.seeds, w.seeds / secs,
                         w.edges / secs, w.split());
    window_ = PhaseTimes{};
    return r;
  }

  Report end_epoch(int64_t epoch, double epoch_s, double cpu_busy) override {
    const PhaseTimes& ep = epoch_times_;
    summary.total_epoch_s += epoch_s;
    busy_s += cpu_busy * epoch_s;
    summary.loss = ep.loss / std::max<int64_t>(1, ep.steps);
    summary.train_acc = static_cast<double>(ep.correct) / std::max<int64_t>(1, ep.seeds);
    totals.add(ep);
    const nlohmann::json mine = trainer_epoch_record(ctx_, ep, epoch_s, {{"seeds_per_s", ep.seeds / epoch_s}});
    Report r;
    r.record = {{"epoch", epoch},
                {"loss", summary.loss},
                {"train_acc", summary.train_acc},
                {"epoch_time_s", epoch_s},
                {"steps", ep.steps},
                {"seeds_per_s", ep.seeds / epoch_s},
                {"edges_per_s", ep.edges / epoch_s},
                {"wait_fraction", ep.wait / epoch_s},
                {"host_cpu_busy", cpu_busy}};
    r.record.update(ep.times());
    r.record["per_trainer"] = run::gather_records(ctx_.collectives(), mine);
    r.line = fmt::format("Epoch {:05d} | Time {:.3f}s | Loss {:.4f} | Train Acc {:.4f} | {:.1f} seeds/s | {:.1f} "
                         "mini-batches/s | {} | host CPU {:.0f}% busy",
                         epoch, epoch_s, summary.loss, summary.train_acc, ep.seeds / epoch_s, ep.steps / epoch_s,
                         ep.split(), 100 * cpu_busy);
    return r;
  }

  Report evaluate(int64_t) override {
    std::tie(summary.val_acc, summary.test_acc) = evaluate_();
    return {{{"val_acc", summary.val_acc}, {"test_acc", summary.test_acc}},
            fmt::format(" | Val Acc {:.4f} | Test Acc {:.4f}", summary.val_acc, summary.test_acc)};
  }

  RunSummary summary;
  PhaseTimes totals;
  double busy_s = 0;  // host CPU busy fraction x epoch seconds, summed

 private:
  distributed::Context& ctx_;
  sampling::DistDataLoader& loader_;
  int64_t steps_per_epoch_;
  const EpochLoop::StepFn& step_;
  const EpochLoop::EvalFn& evaluate_;
  int64_t epoch_ = 0;
  PhaseTimes epoch_times_, window_;
  sampling::MiniBatch batch_;
};

}  // namespace

void check(const EpochLoopOptions& o) {
  if (o.num_epochs < 1) fail("--num-epochs must be at least 1 (got {})", o.num_epochs);
  if (o.first_epoch < 0 || o.first_epoch >= o.num_epochs)
    fail("internal: a run of {} epochs cannot start after epoch {}", o.num_epochs, o.first_epoch);
  if (o.log_every < 1 || o.eval_every < 1)
    fail("--log-every and --eval-every must be at least 1 (got {} and {})", o.log_every, o.eval_every);
}

EpochLoop::EpochLoop(distributed::Context& ctx, run::RunLog& log, EpochLoopOptions options)
    : ctx_(ctx), num_epochs_(options.num_epochs), loop_(log, loop_options(options)) {}

RunSummary EpochLoop::run(sampling::DistDataLoader& loader, int64_t steps_per_epoch, const StepFn& step,
                          const EvalFn& evaluate) {
  NodeClassificationTask task(ctx_, loader, steps_per_epoch, step, evaluate);
  loop_.run(task);
  summary_ = task.summary;
  summary_.epochs = static_cast<int>(num_epochs_ - loop_.first_unit());
  summary_.steps_per_epoch = steps_per_epoch;
  summary_.trainers = ctx_.world_size();
  all_ = task.totals;
  busy_s_ = task.busy_s;
  return summary_;
}

nlohmann::json final_record(const RunSummary& s, const EpochLoop& loop) {
  const PhaseTimes& all = loop.totals();
  nlohmann::json record = {{"val_acc", s.val_acc},
                           {"test_acc", s.test_acc},
                           {"train_acc", s.train_acc},
                           {"loss", s.loss},
                           {"epochs", s.epochs},
                           {"epoch_time_s", s.total_epoch_s / s.epochs},
                           {"steps_per_epoch", s.steps_per_epoch},
                           {"trainers", s.trainers},
                           {"seeds_per_s", all.seeds / s.total_epoch_s},
                           {"mini_batches_per_s", all.steps / s.total_epoch_s},
                           {"edges_per_s", all.edges / s.total_epoch_s},
                           {"wait_fraction", all.wait / s.total_epoch_s},
                           {"host_cpu_busy", loop.host_cpu_busy()},
                           {"model", s.model_dir}};
  record.update(all.times());
  record.update(s.extra);
  return record;
}

void EpochLoop::finish(const RunSummary& summary) {
  const nlohmann::json record = final_record(summary, *this);
  ctx_.finalize();
  loop_.finish(record);
}

}  // namespace tessera::train
