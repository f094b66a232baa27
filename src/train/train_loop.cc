#include "tessera/train/train_loop.h"

#include <algorithm>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera::train {
namespace {

bool by_epochs(const TrainLoopOptions& o) { return o.unit == TrainLoopOptions::Unit::kEpoch; }

}  // namespace

void check(const TrainLoopOptions& o) {
  if (o.total < 1) fail("{} must be at least 1 (got {})", o.total_flag, o.total);
  if (o.first < 0 || o.first >= o.total)
    fail("internal: a run of {} units cannot start after unit {}", o.total, o.first);
  if (o.log_every < 1) fail("the steps between log lines must be at least 1 (got {})", o.log_every);
  if (o.eval_every < 1) fail("the units between evaluations must be at least 1 (got {})", o.eval_every);
  if (o.sync_every < 0) fail("the steps between syncs must be 0 (none) or more (got {})", o.sync_every);
}

TrainLoop::TrainLoop(run::RunLog& log, TrainLoopOptions options) : log_(log), options_(std::move(options)) {
  check(options_);
}

void TrainLoop::run(TrainTask& task) {
  first_ = options_.first;
  if (options_.checkpoints) first_ = options_.checkpoints->resume(options_.total, options_.total_flag);
  task.begin(first_);
  if (by_epochs(options_)) run_epochs(task);
  else run_steps(task);
}

Report TrainLoop::evaluate(TrainTask& task, int64_t units_done) {
  log_.clear_progress();  // an evaluation draws its own bar
  return with_context(
      [&] { return fmt::format("evaluating after {} {}", by_epochs(options_) ? "epoch" : "step",
                               by_epochs(options_) ? units_done - 1 : units_done); },
      [&] { return task.evaluate(units_done); });
}

void TrainLoop::after_unit(int64_t units_done) {
  if (options_.checkpoints) options_.checkpoints->after(units_done, options_.total);
  if (options_.after_unit) options_.after_unit(units_done);
}

void TrainLoop::run_epochs(TrainTask& task) {
  const int64_t log_every = options_.log_every;
  for (int64_t epoch = first_; epoch < options_.total; ++epoch) {
    Timer epoch_timer, window;
    const HostCpu cpu_at_start = host_cpu();
    const int64_t steps = task.start_epoch(epoch);
    int64_t done = 0, drawn = 0;
    for (;;) {
      const int64_t want = log_every - done % log_every;
      const int64_t ran = task.train(want, [&] { log_.progress(static_cast<int>(epoch), ++drawn, steps); });
      done += ran;
      if (ran == want) {
        const Report w = task.log_window(done, window.lap());
        if (!w.record.is_null()) log_.metrics(w.record);
        if (!w.line.empty()) log_.line(w.line);
      }
      if (ran < want) break;
    }
    const double epoch_s = epoch_timer.seconds();
    train_s_ += epoch_s;
    Report r = task.end_epoch(epoch, epoch_s, host_cpu().busy_since(cpu_at_start));
    if (task.evaluates() && ((epoch + 1) % options_.eval_every == 0 || epoch + 1 == options_.total)) {
      const Report e = evaluate(task, epoch + 1);
      if (r.record.is_null()) r.record = nlohmann::json::object();
      r.record.update(e.record);
      r.line += e.line;
    }
    if (!r.record.is_null()) log_.metrics(r.record);
    if (!r.line.empty()) log_.line(r.line);
    after_unit(epoch + 1);
  }
}

void TrainLoop::run_steps(TrainTask& task) {
  const TrainLoopOptions& o = options_;
  const bool evaluates = task.evaluates();
  const int64_t checkpoint_every = o.checkpoints ? o.checkpoints->every() : 0;
  // The next step at which the loop has work: a log window, an evaluation,
  // a checkpoint, a sync or the end.
  auto next_stop = [&](int64_t step) {
    auto next = [step](int64_t every) { return (step / every + 1) * every; };
    int64_t stop = std::min(o.total, next(o.log_every));
    if (evaluates) stop = std::min(stop, next(o.eval_every));
    if (checkpoint_every > 0) stop = std::min(stop, next(checkpoint_every));
    if (o.sync_every > 0) stop = std::min(stop, next(o.sync_every));
    return stop;
  };
  int64_t step = first_;
  double window_s = 0;  // training time since the last log window
  log_.progress("training", step, o.total);
  while (step < o.total) {
    Timer clock;
    const int64_t stop = next_stop(step);
    const int64_t ran = task.train(stop - step, [] {});
    if (ran != stop - step) fail("internal: a step run asked for {} steps ran {}", stop - step, ran);
    step = stop;
    const bool last = step == o.total;
    if ((o.sync_every > 0 && step % o.sync_every == 0) || last) task.sync();
    const double seconds = clock.seconds();
    train_s_ += seconds;
    window_s += seconds;
    log_.progress("training", step, o.total);
    const bool log_due = step % o.log_every == 0 || last;
    Report w;
    if (log_due) {
      w = task.log_window(step, window_s);
      window_s = 0;
    }
    if (evaluates && (step % o.eval_every == 0 || last)) {
      Report e = evaluate(task, step);
      if (w.record.is_object()) {
        w.record.update(e.record);
      } else {
        e.record["step"] = step;
        log_.metrics(e.record);
      }
      w.line += (w.line.empty() ? "" : "\n") + e.line;
    }
    if (w.record.is_object()) log_.metrics(w.record);
    if (!w.line.empty()) log_.line(w.line);
    after_unit(step);
  }
}

void TrainLoop::finish(nlohmann::json record) {
  record["peak_rss_mb"] = static_cast<double>(peak_rss_bytes()) / 1e6;
  log_.final_metrics(record);
}

}  // namespace tessera::train
