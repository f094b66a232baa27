#include "tessera/train/checkpoint.h"

#include <torch/torch.h>

#include <filesystem>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_checkpoint.h"
#include "tessera/job/job_env.h"
#include "tessera/nn/model_files.h"
#include "tessera/run/run_log.h"

namespace tessera::train {

void check(const CheckpointOptions& o) {
  if (o.every < 0) fail("--checkpoint-every must be 0 (none) or more epochs (got {})", o.every);
  if (o.keep < 1) fail("--keep-checkpoints must be at least 1 (got {})", o.keep);
}

bool resuming(const CheckpointOptions& o) { return o.resume || job::launcher_restart() > 0; }

std::string checkpoint_dir(const CheckpointOptions& o, const std::string& out_dir) {
  return o.dir.empty() ? out_dir + "/checkpoints" : o.dir;
}

CheckpointState dense_state(torch::nn::Module& model, torch::optim::Optimizer& optimizer) {
  CheckpointState state;
  state.save = [&model, &optimizer](const std::string& dir) {
    torch::serialize::OutputArchive weights;
    model.save(weights);
    nn::save_archive(weights, dir + "/model.pt");
    torch::serialize::OutputArchive moments;
    optimizer.save(moments);
    nn::save_archive(moments, dir + "/optimizer.pt");
    nn::save_tensor(at::detail::getDefaultCPUGenerator().get_state(), dir + "/rng.pt");
  };
  state.load = [&model, &optimizer](const std::string& dir) {
    with_context([&] { return "loading the checkpoint in " + dir; }, [&] {
      torch::serialize::InputArchive weights;
      weights.load_from(dir + "/model.pt");
      model.load(weights);
      torch::serialize::InputArchive moments;
      moments.load_from(dir + "/optimizer.pt");
      optimizer.load(moments);
      torch::Tensor rng;
      torch::load(rng, dir + "/rng.pt");
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(rng);
      return 0;
    });
  };
  return state;
}

TrainingCheckpoints::TrainingCheckpoints(distributed::Context* ctx, const CheckpointOptions& options,
                                         const std::string& dir, run::RunLog& log, CheckpointState state)
    : ctx_(ctx),
      log_(&log),
      options_(options),
      dir_(std::filesystem::absolute(dir).lexically_normal().string()),
      state_(std::move(state)),
      mine_(dir_, fmt::format("trainer-{}", state_.every_trainer ? rank() : 0), options.keep, state_.unit) {
  check(options);
  if (!state_.server_tensors.empty() && ctx_ == nullptr) fail("internal: server tensors to checkpoint without a job");
}

int TrainingCheckpoints::rank() const { return ctx_ ? ctx_->rank() : 0; }

void TrainingCheckpoints::barrier() {
  if (ctx_) ctx_->collectives().barrier();
}

int64_t TrainingCheckpoints::resume(int64_t total, const std::string& total_flag) {
  if (!resuming(options_)) return 0;
  const bool writes = state_.every_trainer || rank() == 0;
  // This trainer's intact shares, after whether it holds any (a replica holds none).
  std::vector<int64_t> mine = writes ? mine_.intact() : std::vector<int64_t>{};
  mine.insert(mine.begin(), mine.empty() ? 0 : 1);
  // One trainer asks the servers; the all-gather tells the others.
  if (rank() == 0 && !state_.server_tensors.empty()) {
    const std::vector<int64_t> theirs = distributed::intact_server_checkpoints(*ctx_, dir_, state_.unit);
    std::vector<int64_t> common = held_by_both({mine.begin() + 1, mine.end()}, theirs);
    common.insert(common.begin(), mine[0]);
    mine = common;
  }
  const std::vector<std::vector<int64_t>> all = ctx_ ? ctx_->collectives().all_gather(mine)
                                                     : std::vector<std::vector<int64_t>>{mine};
  bool anyone_has_one = false;
  std::vector<int64_t> common(all[0].begin() + 1, all[0].end());
  for (const std::vector<int64_t>& theirs : all) {
    anyone_has_one = anyone_has_one || theirs[0] == 1;
    if (state_.every_trainer) common = held_by_both(common, {theirs.begin() + 1, theirs.end()});
  }
  const int64_t done = common.empty() ? 0 : common.front();
  const std::string& unit = state_.unit;
  if (done == 0) {
    if (options_.resume && !anyone_has_one)
      fail("--resume: no checkpoint in {}: none has been written whole yet", dir_);
    log_->line(fmt::format("{}: no checkpoint that every process holds in {}; starting from the first {}",
                           options_.resume ? "--resume" : "restarted by the launcher", dir_, unit));
    return 0;
  }
  if (done >= total)
    fail("--resume: the checkpoint in {} has {} {}s done; {} {} leaves nothing to train", dir_, done, unit,
         total_flag, total);
  if (writes) state_.load(mine_.path(done));
  if (rank() == 0 && !state_.server_tensors.empty())
    distributed::load_server_checkpoint(*ctx_, dir_, done, state_.server_tensors, unit);
  barrier();  // no trainer reads the tensors before they are loaded
  if (state_.after_load) state_.after_load();
  // Epochs are numbered from 0 in the logs, steps from 1.
  log_->line(fmt::format("resuming after {} {} from {}", unit, unit == "epoch" ? done - 1 : done,
                         mine_.path(done)));
  return done;
}

void TrainingCheckpoints::after(int64_t done, int64_t total) {
  if (options_.every == 0 || done % options_.every != 0 || done >= total) return;
  Timer timer;
  if (state_.before_save) state_.before_save();
  uint64_t server_bytes = 0;
  if (!state_.server_tensors.empty()) {
    // The rows are those of exactly `done` units: every trainer's updates
    // have landed, and none of the next unit's until the servers are done.
    barrier();
    if (rank() == 0)
      server_bytes = distributed::save_server_checkpoint(*ctx_, dir_, done, state_.server_tensors, options_.keep,
                                                         state_.unit);
    barrier();
  }
  const bool writes = state_.every_trainer || rank() == 0;
  const uint64_t bytes = writes ? mine_.save(done, state_.save) : 0;
  const std::string& unit = state_.unit;
  log_->line(fmt::format("checkpoint after {} {} written in {:.2f} s: {:.1f} MB per trainer{}", unit,
                         unit == "epoch" ? done - 1 : done, timer.seconds(), static_cast<double>(bytes) / 1e6,
                         state_.server_tensors.empty()
                             ? std::string()
                             : fmt::format(", {:.1f} MB on the servers", static_cast<double>(server_bytes) / 1e6)));
}

}  // namespace tessera::train
