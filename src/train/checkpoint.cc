#include "tessera/train/checkpoint.h"

#include <torch/torch.h>

#include <filesystem>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_checkpoint.h"
#include "tessera/distributed/job_env.h"
#include "tessera/train/run_log.h"

namespace tessera::train {
namespace {

void save_dense(const std::string& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer) {
  torch::serialize::OutputArchive weights;
  model.save(weights);
  weights.save_to(dir + "/model.pt");
  torch::serialize::OutputArchive state;
  optimizer.save(state);
  state.save_to(dir + "/optimizer.pt");
  torch::save(at::detail::getDefaultCPUGenerator().get_state(), dir + "/rng.pt");
}

void load_dense(const std::string& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer) {
  with_context([&] { return "loading the checkpoint in " + dir; }, [&] {
    torch::serialize::InputArchive weights;
    weights.load_from(dir + "/model.pt");
    model.load(weights);
    torch::serialize::InputArchive state;
    state.load_from(dir + "/optimizer.pt");
    optimizer.load(state);
    torch::Tensor rng;
    torch::load(rng, dir + "/rng.pt");
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng);
    return 0;
  });
}

}  // namespace

void check(const CheckpointOptions& o) {
  if (o.every < 0) fail("--checkpoint-every must be 0 (none) or more epochs (got {})", o.every);
  if (o.keep < 1) fail("--keep-checkpoints must be at least 1 (got {})", o.keep);
}

bool resuming(const CheckpointOptions& o) { return o.resume || distributed::launcher_restart() > 0; }

int64_t agree_on_checkpoint(distributed::Context& ctx, const std::vector<int64_t>& intact) {
  std::vector<int64_t> common = intact;
  for (const auto& theirs : ctx.collectives().all_gather(intact)) common = held_by_both(common, theirs);
  return common.empty() ? 0 : common.front();
}

TrainingCheckpoints::TrainingCheckpoints(distributed::Context& ctx, const CheckpointOptions& options,
                                         const std::string& out_dir, RunLog& log,
                                         std::vector<std::string> server_tensors)
    : ctx_(&ctx),
      log_(&log),
      options_(options),
      dir_(std::filesystem::absolute(options.dir.empty() ? out_dir + "/checkpoints" : options.dir).string()),
      mine_(dir_, fmt::format("trainer-{}", ctx.rank()), options.keep),
      server_tensors_(std::move(server_tensors)) {
  check(options);
}

int TrainingCheckpoints::resume(torch::nn::Module& model, torch::optim::Optimizer& optimizer, int num_epochs) {
  if (!resuming(options_)) return 0;
  std::vector<int64_t> intact = mine_.intact();
  // One trainer asks the servers; the all-gather tells the others.
  if (ctx_->rank() == 0 && !server_tensors_.empty())
    intact = held_by_both(intact, distributed::intact_server_checkpoints(*ctx_, dir_));
  const int epochs = static_cast<int>(agree_on_checkpoint(*ctx_, intact));
  if (epochs == 0) {
    log_->line(fmt::format("--resume: no checkpoint that every process holds in {}; starting from the first epoch",
                         dir_));
    return 0;
  }
  if (epochs >= num_epochs)
    fail("--resume: the checkpoint in {} has {} epochs done; --num-epochs {} leaves nothing to train", dir_, epochs,
         num_epochs);
  load_dense(mine_.path(epochs), model, optimizer);
  if (ctx_->rank() == 0 && !server_tensors_.empty())
    distributed::load_server_checkpoint(*ctx_, dir_, epochs, server_tensors_);
  ctx_->collectives().barrier();  // no trainer reads the tensors before they are loaded
  log_->line(fmt::format("resuming after epoch {} from {}", epochs - 1, mine_.path(epochs)));
  return epochs;
}

void TrainingCheckpoints::after_epoch(int done, int num_epochs, torch::nn::Module& model,
                                      torch::optim::Optimizer& optimizer) {
  if (options_.every == 0 || done % options_.every != 0 || done >= num_epochs) return;
  Timer timer;
  uint64_t server_bytes = 0;
  if (!server_tensors_.empty()) {
    // The rows are those of exactly `done` epochs: every trainer's updates
    // have landed, and none of the next epoch's until the servers are done.
    ctx_->collectives().barrier();
    if (ctx_->rank() == 0)
      server_bytes = distributed::save_server_checkpoint(*ctx_, dir_, done, server_tensors_, options_.keep);
    ctx_->collectives().barrier();
  }
  const uint64_t mine = mine_.save(done, [&](const std::string& dir) { save_dense(dir, model, optimizer); });
  log_->line(fmt::format("checkpoint after epoch {} written in {:.2f} s: {:.1f} MB per trainer{}", done - 1,
                         timer.seconds(), static_cast<double>(mine) / 1e6,
                         server_tensors_.empty() ? std::string()
                                                 : fmt::format(", {:.1f} MB on the servers", server_bytes / 1e6)));
}

}  // namespace tessera::train
