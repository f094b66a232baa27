// Link prediction as a task on the one TrainLoop (`tessera train link`): the model (a GraphSAGE encoder and a
// pair decoder), its training step over edge batches, and the ranking evaluation of held-out edges.
//
// Internal header. The task keeps references to what run_link_training() owns (context, loader, model,
// optimizer), which outlive it; it runs on the loop's thread. Evaluation is collective.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "tessera/distributed/context.h"
#include "tessera/nn/link_decoder.h"
#include "tessera/nn/sage.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/train_loop.h"
#include "tessera/train/gradient_step.h"
#include "tessera/train/phase_times.h"

namespace tessera::train {

// One module, so checkpoints, broadcasts and the gradient all-reduce take both parts at once.
class LinkModelImpl : public torch::nn::Module {
 public:
  LinkModelImpl(const nn::SageOptions& encoder, const std::string& decoder);
  // Embeddings of blocks.back()'s destinations.
  torch::Tensor embed(const std::vector<nn::BlockTensors>& blocks, const torch::Tensor& x) {
    return encoder->forward(blocks, x);
  }
  nn::Sage encoder{nullptr};
  nn::LinkDecoder decoder{nullptr};
};
TORCH_MODULE(LinkModel);

// Ranking metrics of held-out edges: each pair against its negatives.
struct RankMetrics {
  double mrr = -1, hits1 = -1, hits10 = -1, hits50 = -1;
  int64_t edges = 0;
};

// How held-out edges are ranked.
struct RankingOptions {
  int64_t negatives = 100;  // negative destinations per edge, drawn uniformly (fixed by `seed`)
  uint64_t seed = 0;
  sampling::LoaderOptions loader;  // the embedding pass's batches
};

// The embeddings of `nodes` (unique, ascending), through `sampler`, in their order; not collective.
torch::Tensor embed_nodes(distributed::Context& ctx, LinkModel& model, const sampling::DistNeighborSampler& sampler,
                          const std::vector<int64_t>& nodes, sampling::LoaderOptions options);

// Collective. Ranks this trainer's even share of `pairs` ([n, 2] flattened): embeds the nodes that share
// reads (sources, destinations, negatives) through `sampler`, scores, and sums the metrics over the trainers.
RankMetrics rank_held_out(distributed::Context& ctx, LinkModel& model, const sampling::DistNeighborSampler& sampler,
                          const std::vector<int64_t>& pairs, const RankingOptions& options);

// Binary cross-entropy of positive pairs against negative ones, averaged over
// all pairs (DGL's unsupervised GraphSAGE loss).
torch::Tensor link_loss(const torch::Tensor& pos_scores, const torch::Tensor& neg_scores);

class LinkPredictionTask final : public TrainTask {
 public:
  using Evaluate = std::function<std::pair<RankMetrics, RankMetrics>()>;  // (validation, test)
  LinkPredictionTask(distributed::Context& ctx, sampling::DistDataLoader& loader, int64_t steps_per_epoch,
                     LinkModel& model, torch::optim::Optimizer& optimizer, Evaluate evaluate);

  int64_t start_epoch(int64_t epoch) override;
  int64_t train(int64_t steps, const std::function<void()>& stepped) override;
  Report log_window(int64_t step, double seconds) override;
  Report end_epoch(int64_t epoch, double seconds, double cpu_busy) override;
  Report evaluate(int64_t units_done) override;

  RankMetrics val, test;
  PhaseTimes totals;
  double total_epoch_s = 0, last_loss = 0;

 private:
  StepResult step(const sampling::MiniBatch& batch);

  distributed::Context& ctx_;
  sampling::DistDataLoader& loader_;
  int64_t steps_per_epoch_;
  LinkModel& model_;
  torch::optim::Optimizer& optimizer_;
  Evaluate evaluate_;
  int64_t epoch_ = 0, edges_ = 0, window_edges_ = 0;
  PhaseTimes epoch_times_, window_;
  sampling::MiniBatch batch_;
};

}  // namespace tessera::train
