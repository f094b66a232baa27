// The step loop the epoch tasks share (node classification's EpochLoop, link prediction's task): batches from a
// loader, each step timed (the wait for its batch, its own thread's CPU) and named in any error it throws; and a
// trainer's own record of an epoch from those times.
//
// Internal header; runs on the training loop's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/distributed/context.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/phase_times.h"

namespace tessera::train {

// Runs up to `steps` steps, each on the loader's next batch (read into
// *batch); stops early when the loader has none. An error a step throws
// gets describe()'s words around it. After each step its batch, wait and
// times go into every PhaseTimes of `into`, then stepped() runs. Returns
// the steps run.
int64_t run_timed_steps(sampling::DistDataLoader& loader, sampling::MiniBatch* batch, int64_t steps,
                        const std::function<std::string()>& describe, const std::function<StepResult()>& step,
                        std::initializer_list<PhaseTimes*> into, const std::function<void()>& stepped);

// This trainer's record of an epoch (an entry of the epoch record's
// per_trainer): rank, process, host, steps, `rates` (seeds_per_s or
// edges_per_s), mini-batches/s, the epoch's time, peak RSS, the time split.
nlohmann::json trainer_epoch_record(const distributed::Context& ctx, const PhaseTimes& epoch, double epoch_s,
                                    const nlohmann::json& rates);

}  // namespace tessera::train
