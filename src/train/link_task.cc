#include "train/link_task.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/base/timer.h"
#include "tessera/distributed/node_split.h"
#include "tessera/run/run_log.h"
#include "tessera/train/batch_views.h"
#include "train/step_timing.h"

namespace tessera::train {

LinkModelImpl::LinkModelImpl(const nn::SageOptions& encoder_options, const std::string& decoder_kind) {
  encoder = register_module("encoder", nn::Sage(encoder_options));
  decoder = register_module("decoder", nn::LinkDecoder(decoder_kind, encoder_options.num_classes));
}

torch::Tensor link_loss(const torch::Tensor& pos_scores, const torch::Tensor& neg_scores) {
  const torch::Tensor scores = torch::cat({pos_scores, neg_scores});
  const torch::Tensor labels = torch::cat({torch::ones_like(pos_scores), torch::zeros_like(neg_scores)});
  return torch::nn::functional::binary_cross_entropy_with_logits(scores, labels);
}

namespace {

torch::Tensor ids_tensor(const std::vector<int64_t>& v) {
  return torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kInt64);
}

}  // namespace

torch::Tensor embed_nodes(distributed::Context& ctx, LinkModel& model, const sampling::DistNeighborSampler& sampler,
                    const std::vector<int64_t>& nodes, sampling::LoaderOptions options) {
  const int64_t dim = model->encoder->options().num_classes;
  torch::Tensor out = torch::empty({static_cast<int64_t>(nodes.size()), dim});
  if (nodes.empty()) return out;
  options.shuffle = false;
  options.edges = nullptr;
  options.label = "";
  sampling::DistDataLoader loader(ctx, sampler, nodes, options);
  loader.start_epoch(0);
  sampling::MiniBatch batch;
  while (loader.next(&batch)) {
    // The loader sorts each batch's seeds; `nodes` is sorted, so positions follow by search.
    std::vector<int64_t> rows(batch.seeds.size());
    for (size_t i = 0; i < rows.size(); ++i)
      rows[i] = std::lower_bound(nodes.begin(), nodes.end(), batch.seeds[i]) - nodes.begin();
    out.index_copy_(0, ids_tensor(rows), model->embed(blocks_of(batch), features_of(batch)));
  }
  return out;
}

RankMetrics rank_held_out(distributed::Context& ctx, LinkModel& model, const sampling::DistNeighborSampler& sampler,
                          const std::vector<int64_t>& pairs, const RankingOptions& options) {
  torch::NoGradGuard no_grad;
  model->eval();
  const int64_t total = static_cast<int64_t>(pairs.size() / 2), k = options.negatives, n = ctx.config().num_nodes;
  const auto [first, last] = distributed::even_range(total, ctx.rank(), ctx.world_size());
  const int64_t m = last - first;
  // Per edge of this trainer's share: its source, its destination, then k negatives fixed by (seed, edge).
  std::vector<int64_t> ids(m * (2 + k));
  for (int64_t i = 0; i < m; ++i) {
    ids[i] = pairs[2 * (first + i)];
    ids[m + i] = pairs[2 * (first + i) + 1];
    Rng rng(options.seed, static_cast<uint64_t>(first + i));
    for (int64_t j = 0; j < k; ++j) ids[2 * m + i * k + j] = static_cast<int64_t>(rng.below(n));
  }
  // Only the nodes the ranking reads are embedded.
  std::vector<int64_t> nodes(ids);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const torch::Tensor emb = embed_nodes(ctx, model, sampler, nodes, options.loader);
  for (int64_t& v : ids) v = std::lower_bound(nodes.begin(), nodes.end(), v) - nodes.begin();
  double sums[5] = {0, 0, 0, 0, static_cast<double>(m)};  // reciprocal ranks, hits@1, @10, @50, edges
  constexpr int64_t kChunk = 512;
  const torch::Tensor at = ids_tensor(ids);
  for (int64_t begin = 0; begin < m; begin += kChunk) {
    const int64_t c = std::min(m, begin + kChunk) - begin;
    const torch::Tensor src = emb.index_select(0, at.slice(0, begin, begin + c));
    const torch::Tensor dst = emb.index_select(0, at.slice(0, m + begin, m + begin + c));
    const torch::Tensor neg = emb.index_select(0, at.slice(0, 2 * m + begin * k, 2 * m + (begin + c) * k));
    const torch::Tensor pos_score = model->decoder->forward(src, dst);
    const torch::Tensor neg_score = model->decoder->forward(src.repeat_interleave(k, 0), neg).reshape({c, k});
    // Rank among the negatives; ties count half, between OGB's optimistic and pessimistic ranks.
    const torch::Tensor above = (neg_score > pos_score.unsqueeze(1)).sum(1).to(torch::kDouble);
    const torch::Tensor ties = (neg_score == pos_score.unsqueeze(1)).sum(1).to(torch::kDouble);
    const torch::Tensor rank = above + 0.5 * ties + 1;
    sums[0] += (1.0 / rank).sum().item<double>();
    sums[1] += (rank <= 1).sum().item<double>();
    sums[2] += (rank <= 10).sum().item<double>();
    sums[3] += (rank <= 50).sum().item<double>();
  }
  ctx.collectives().all_reduce_sum(sums, 5);
  model->train();
  RankMetrics r;
  r.edges = static_cast<int64_t>(sums[4]);
  if (r.edges == 0) return r;
  r.mrr = sums[0] / sums[4];
  r.hits1 = sums[1] / sums[4];
  r.hits10 = sums[2] / sums[4];
  r.hits50 = sums[3] / sums[4];
  return r;
}

LinkPredictionTask::LinkPredictionTask(distributed::Context& ctx, sampling::DistDataLoader& loader,
                                       int64_t steps_per_epoch, LinkModel& model, torch::optim::Optimizer& optimizer,
                                       Evaluate evaluate)
    : ctx_(ctx),
      loader_(loader),
      steps_per_epoch_(steps_per_epoch),
      model_(model),
      optimizer_(optimizer),
      evaluate_(std::move(evaluate)) {}

int64_t LinkPredictionTask::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  epoch_times_ = window_ = PhaseTimes{};
  edges_ = window_edges_ = 0;
  loader_.start_epoch(static_cast<int>(epoch));
  return steps_per_epoch_;
}

StepResult LinkPredictionTask::step(const sampling::MiniBatch& batch) {
  StepResult r;
  Timer t;
  const torch::Tensor h = model_->embed(blocks_of(batch), features_of(batch));
  const sampling::EdgeBatch& e = batch.edges;
  const torch::Tensor pos = model_->decoder->forward(h.index_select(0, ids_tensor(e.src)), h.index_select(0, ids_tensor(e.dst)));
  const torch::Tensor neg =
      model_->decoder->forward(h.index_select(0, ids_tensor(e.neg_src)), h.index_select(0, ids_tensor(e.neg_dst)));
  const torch::Tensor loss = link_loss(pos, neg);
  r.compute_s = t.seconds();
  apply_gradients(*model_, optimizer_, ctx_.collectives(), loss, &r);
  r.loss = loss.item<double>();
  return r;
}

int64_t LinkPredictionTask::train(int64_t steps, const std::function<void()>& stepped) {
  return run_timed_steps(
      loader_, &batch_, steps,
      [&] {
        return fmt::format("link training step {} of epoch {} on trainer {} ({} edges, {} nodes)",
                           epoch_times_.steps + 1, epoch_, ctx_.rank(), batch_.edges.eids.size(), batch_.seeds.size());
      },
      [&] { return step(batch_); }, {&epoch_times_, &window_},
      [&] {
        edges_ += static_cast<int64_t>(batch_.edges.eids.size());
        window_edges_ += static_cast<int64_t>(batch_.edges.eids.size());
        stepped();
      });
}

Report LinkPredictionTask::log_window(int64_t step, double) {
  const PhaseTimes& w = window_;
  const double secs = w.wait + w.compute + w.allreduce;
  Report r;
  r.line = fmt::format("Epoch {:05d} | Step {:05d} | Loss {:.4f} | Speed (edges/s) {:.1f} | {}", epoch_, step,
                       w.loss / std::max<int64_t>(1, w.steps), window_edges_ / secs, w.split());
  window_ = PhaseTimes{};
  window_edges_ = 0;
  return r;
}

Report LinkPredictionTask::end_epoch(int64_t epoch, double epoch_s, double cpu_busy) {
  const PhaseTimes& ep = epoch_times_;
  total_epoch_s += epoch_s;
  last_loss = ep.loss / std::max<int64_t>(1, ep.steps);
  totals.add(ep);
  const nlohmann::json mine = trainer_epoch_record(ctx_, ep, epoch_s, {{"edges_per_s", edges_ / epoch_s}});
  Report r;
  r.record = {{"epoch", epoch},
              {"loss", last_loss},
              {"epoch_time_s", epoch_s},
              {"steps", ep.steps},
              {"positive_edges_per_s", edges_ / epoch_s},
              {"mini_batches_per_s", ep.steps / epoch_s},
              {"wait_fraction", ep.wait / epoch_s},
              {"host_cpu_busy", cpu_busy}};
  r.record.update(ep.times());
  r.record["per_trainer"] = run::gather_records(ctx_.collectives(), mine);
  r.line = fmt::format("Epoch {:05d} | Time {:.3f}s | Loss {:.4f} | {:.1f} edges/s | {:.1f} mini-batches/s | {} | "
                       "host CPU {:.0f}% busy",
                       epoch, epoch_s, last_loss, edges_ / epoch_s, ep.steps / epoch_s, ep.split(), 100 * cpu_busy);
  return r;
}

Report LinkPredictionTask::evaluate(int64_t) {
  std::tie(val, test) = evaluate_();
  Report r;
  r.record = {{"val_mrr", val.mrr}, {"test_mrr", test.mrr}, {"test_hits@1", test.hits1},
              {"test_hits@10", test.hits10}, {"test_hits@50", test.hits50}};
  r.line = fmt::format(" | Val MRR {:.4f} | Test MRR {:.4f} | Hits@1 {:.4f} @10 {:.4f} @50 {:.4f}", val.mrr, test.mrr,
                       test.hits1, test.hits10, test.hits50);
  return r;
}

}  // namespace tessera::train
