#include "train/step_timing.h"

#include "tessera/base/error.h"
#include "tessera/base/process.h"
#include "tessera/base/timer.h"

namespace tessera::train {

int64_t run_timed_steps(sampling::DistDataLoader& loader, sampling::MiniBatch* batch, int64_t steps,
                        const std::function<std::string()>& describe, const std::function<StepResult()>& step,
                        std::initializer_list<PhaseTimes*> into, const std::function<void()>& stepped) {
  int64_t ran = 0;
  for (; ran < steps; ++ran) {
    Timer t;
    if (!loader.next(batch)) break;
    const double wait = t.seconds();
    const ThreadCpuTimer cpu;
    const StepResult r = with_context(describe, step);
    const double step_cpu = cpu.seconds();
    for (PhaseTimes* times : into) times->add_step(*batch, wait, r, step_cpu);
    stepped();
  }
  return ran;
}

nlohmann::json trainer_epoch_record(const distributed::Context& ctx, const PhaseTimes& epoch, double epoch_s,
                                    const nlohmann::json& rates) {
  nlohmann::json mine = {{"rank", ctx.rank()}, {"process", ctx.env().label()}, {"host", host_name()},
                         {"steps", epoch.steps}};
  mine.update(rates);
  mine.update({{"mini_batches_per_s", epoch.steps / epoch_s},
               {"epoch_time_s", epoch_s},
               {"peak_rss_mb", peak_rss_bytes() / 1e6}});
  mine.update(epoch.times());
  return mine;
}

}  // namespace tessera::train
