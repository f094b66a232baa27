#include "train_common.h"

#include <algorithm>

#include <fmt/format.h>

#include "../nn/grad_sync.h"
#include "tessera/dist/dist_tensor.h"
#include "tessera/dist/id_chunks.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/util/error.h"
#include "tessera/util/timer.h"

namespace tessera::train {

void PhaseTimes::add_batch(const sampling::MiniBatch& b) {
  sample += b.sample_s;
  fetch += b.fetch_s;
  seeds += static_cast<int64_t>(b.seeds.size());
  for (const auto& block : b.blocks) edges += block.num_edges();
}

void PhaseTimes::add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double sparse_s) {
  add_batch(b);
  wait += wait_s;
  compute += step.compute_s;
  allreduce += step.allreduce_s;
  sparse += sparse_s;
  loss += step.loss;
  correct += step.correct;
  ++steps;
}

nlohmann::json PhaseTimes::times() const {
  nlohmann::json j = {{"sample_s", sample}, {"fetch_s", fetch}, {"wait_s", wait}, {"compute_s", compute},
                      {"allreduce_s", allreduce}};
  if (sparse > 0) j["sparse_update_s"] = sparse;
  return j;
}

StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, dist::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels) {
  StepResult r;
  Timer t;
  const torch::Tensor logits = forward();
  const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
  optimizer.zero_grad();
  loss.backward();
  r.compute_s = t.seconds();
  t.reset();
  nn::allreduce_gradients(model, coll);
  r.allreduce_s = t.seconds();
  t.reset();
  optimizer.step();
  r.correct = logits.argmax(1).eq(labels).sum().item<int64_t>();
  r.loss = loss.item<double>();
  r.compute_s += t.seconds();
  return r;
}

void PhaseTimes::add(const PhaseTimes& o) {
  sample += o.sample, fetch += o.fetch, wait += o.wait, compute += o.compute, allreduce += o.allreduce;
  sparse += o.sparse;
  steps += o.steps, seeds += o.seeds, edges += o.edges, correct += o.correct, loss += o.loss;
}

std::string PhaseTimes::split() const {
  std::string text = fmt::format("sample {:.3f}s fetch {:.3f}s wait {:.3f}s compute {:.3f}s all-reduce {:.3f}s",
                                 sample, fetch, wait, compute, allreduce);
  if (sparse > 0) text += fmt::format(" sparse update {:.3f}s", sparse);
  return text;
}

nlohmann::json final_record(const RunSummary& s, const PhaseTimes& all) {
  nlohmann::json record = {{"val_acc", s.val_acc},
                           {"test_acc", s.test_acc},
                           {"train_acc", s.train_acc},
                           {"loss", s.loss},
                           {"epochs", s.epochs},
                           {"epoch_time_s", s.total_epoch_s / s.epochs},
                           {"steps_per_epoch", s.steps_per_epoch},
                           {"trainers", s.trainers},
                           {"seeds_per_s", all.seeds / s.total_epoch_s},
                           {"peak_rss_mb", peak_rss_bytes() / 1e6},
                           {"model", s.model_dir}};
  record.update(all.times());
  return record;
}

std::vector<int64_t> layer_fanouts(const std::string& text, int layers, const char* flag) {
  std::vector<int64_t> f = sampling::parse_fanouts(text, flag);
  if (f.size() == 1) f.assign(layers, f[0]);
  if (static_cast<int>(f.size()) != layers)
    fail("{} '{}' gives {} fanouts for {} layers", flag, text, f.size(), layers);
  return f;
}

int64_t count_classes(dist::Context& ctx, const std::string& label_name) {
  dist::DistTensor labels;
  try {
    labels = dist::DistTensor::open(ctx, label_name);
  } catch (const Error&) {
    fail("the graph has no node data '{}': node classification needs labels", label_name);
  }
  if (labels.spec().dtype != DType::kInt64 || labels.spec().row_elems() != 1)
    fail("node data '{}' must hold one int64 label per node", label_name);
  // Each trainer scans its rank's share of the IDs: they are partition-major,
  // so a trainer beside a partition reads mostly from memory, and trainers
  // on client machines (server-client mode) split the pulls between them.
  const int64_t n = labels.num_rows();
  int64_t max_label = -1;
  dist::for_each_id_chunk(n * ctx.rank() / ctx.world_size(), n * (ctx.rank() + 1) / ctx.world_size(),
                          [&](int64_t, const std::vector<int64_t>& ids) {
                            const Array chunk = labels.pull(ids);
                            const int64_t* l = chunk.data<int64_t>();
                            for (size_t i = 0; i < ids.size(); ++i) max_label = std::max(max_label, l[i]);
                          });
  for (const auto& v : ctx.collectives().all_gather({max_label})) max_label = std::max(max_label, v.at(0));
  if (max_label < 0) fail("node data '{}' has no labels", label_name);
  return max_label + 1;
}

void broadcast_parameters(torch::nn::Module& model, dist::Collectives& coll) {
  if (coll.size() == 1) return;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters()) {
    torch::Tensor c = p.contiguous();
    coll.broadcast(c.data_ptr<float>(), c.numel(), 0);
    p.copy_(c);
  }
}

int64_t common_steps(dist::Context& ctx, int64_t local_steps, int64_t local_seeds, int64_t max_batches,
                     int64_t* total_seeds) {
  int64_t steps = local_steps;
  *total_seeds = 0;
  for (const auto& v : ctx.collectives().all_gather({local_steps, local_seeds})) {
    steps = std::min(steps, v.at(0));
    *total_seeds += v.at(1);
  }
  if (max_batches >= 0) steps = std::min(steps, max_batches);
  if (steps == 0) fail("a trainer has no training batch: fewer training nodes than trainers");
  return steps;
}

torch::Tensor rows_of(const Array& rows) {
  const int64_t n = rows.shape()[0];
  return torch::from_blob(const_cast<void*>(rows.raw()), {n, rows.numel() / std::max<int64_t>(1, n)},
                          torch::kFloat32);
}

torch::Tensor features_of(const sampling::MiniBatch& batch) { return rows_of(batch.features); }

torch::Tensor labels_of(const sampling::MiniBatch& batch) {
  return torch::from_blob(const_cast<void*>(batch.labels.raw()), {batch.labels.shape()[0]}, torch::kInt64);
}

}  // namespace tessera::train
