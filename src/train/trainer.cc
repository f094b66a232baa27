#include "tessera/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "tessera/distributed/grad_sync.h"
#include "tessera/distributed/dist_tensor.h"
#include "tessera/nn/cross_entropy.h"
#include "base/progress.h"
#include "distributed/id_chunks.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/base/error.h"
#include "tessera/base/process.h"
#include "tessera/base/timer.h"

namespace tessera::train {

void PhaseTimes::add_batch(const sampling::MiniBatch& b) {
  sample += b.sample_s;
  fetch += b.fetch_s;
  sample_cpu += b.sample_cpu_s;
  fetch_cpu += b.fetch_cpu_s;
  seeds += static_cast<int64_t>(b.seeds.size());
  for (const auto& block : b.blocks) edges += block.num_edges();
  if (blocks.size() < b.blocks.size()) blocks.resize(b.blocks.size());
  for (size_t i = 0; i < b.blocks.size(); ++i) {
    blocks[i].src += static_cast<double>(b.blocks[i].num_src());
    blocks[i].dst += static_cast<double>(b.blocks[i].num_dst);
    blocks[i].edges += static_cast<double>(b.blocks[i].num_edges());
  }
}

void PhaseTimes::add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double step_cpu_s) {
  add_batch(b);
  step_cpu += step_cpu_s;
  wait += wait_s;
  compute += step.compute_s;
  allreduce += step.allreduce_s;
  allreduce_cpu += step.allreduce_cpu_s;
  sparse += step.sparse_s;
  loss += step.loss;
  correct += step.correct;
  ++steps;
}

nlohmann::json PhaseTimes::times() const {
  nlohmann::json j = {{"sample_s", sample}, {"fetch_s", fetch}, {"wait_s", wait}, {"compute_s", compute},
                      {"allreduce_s", allreduce}};
  if (sparse > 0) j["sparse_update_s"] = sparse;
  if (step_cpu > 0) j["step_cpu_s"] = step_cpu;
  if (allreduce_cpu > 0) j["allreduce_cpu_s"] = allreduce_cpu;
  if (sample_cpu > 0) j["sample_cpu_s"] = sample_cpu;
  if (fetch_cpu > 0) j["fetch_cpu_s"] = fetch_cpu;
  if (steps > 0 && !blocks.empty()) {
    const auto n = static_cast<double>(steps);
    nlohmann::json layers = nlohmann::json::array();
    for (const BlockSums& l : blocks) layers.push_back({{"src", l.src / n}, {"dst", l.dst / n}, {"edges", l.edges / n}});
    j["mean_blocks"] = layers;
  }
  return j;
}

StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels) {
  StepResult r;
  Timer t;
  const torch::Tensor logits = forward();
  const torch::Tensor loss = nn::cross_entropy(logits, labels, &r.correct);
  r.compute_s = t.seconds();
  apply_gradients(model, optimizer, coll, loss, &r);
  t.reset();
  r.loss = loss.item<double>();
  r.compute_s += t.seconds();
  return r;
}

namespace {

// optimizer.zero_grad() and backward, with the gradients dropped instead of
// zeroed (PyTorch 2's set_to_none): backward's AccumulateGrad then takes
// each new gradient as it is rather than adding it into zeros, three tensor
// ops fewer per parameter (zero_grad's detach_ and zero_, the add), which
// at a GNN's weight sizes cost their dispatch. A parameter that had a
// gradient and gets none from this loss gets zeros, as zero_grad left it,
// so the optimizer sees what it saw before.
void backward_into_fresh_gradients(torch::optim::Optimizer& optimizer, const torch::Tensor& loss) {
  std::vector<torch::Tensor*> had_gradient;
  for (auto& group : optimizer.param_groups())
    for (torch::Tensor& p : group.params())
      if (p.grad().defined()) {
        had_gradient.push_back(&p);
        p.mutable_grad().reset();
      }
  loss.backward();
  for (torch::Tensor* p : had_gradient)
    if (!p->grad().defined()) p->mutable_grad() = torch::zeros_like(*p);
}

// The destinations' own rows of a batch whose loader aggregated its inputs
// (undefined when it carries none: the "gcn" aggregator needs none).
torch::Tensor destination_rows_of(const sampling::MiniBatch& batch) {
  return batch.features.empty_handle() ? torch::Tensor() : features_of(batch);
}

// The all-reduce of the gradients backward left and the optimizer's step.
void synchronize_and_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                          StepResult* r) {
  Timer t;
  const ThreadCpuTimer cpu;
  distributed::allreduce_gradients(model, coll);
  r->allreduce_s += t.seconds();
  r->allreduce_cpu_s += cpu.seconds();
  t.reset();
  optimizer.step();
  r->compute_s += t.seconds();
}

}  // namespace

void apply_gradients(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                     const torch::Tensor& loss, StepResult* r) {
  Timer t;
  backward_into_fresh_gradients(optimizer, loss);
  r->compute_s += t.seconds();
  synchronize_and_step(model, optimizer, coll, r);
}

StepResult sage_supervised_step(nn::Sage& model, nn::SageStep& step, torch::optim::Optimizer& optimizer,
                                distributed::Collectives& coll, const sampling::MiniBatch& batch,
                                const torch::Tensor& labels) {
  const std::vector<nn::BlockTensors> blocks = blocks_of(batch);
  if (batch.aggregated.empty_handle())
    return supervised_step(*model, optimizer, coll, [&] { return sage_logits(model, batch, blocks); }, labels);
  StepResult r;
  Timer t;
  const nn::SageStepResult own =
      step.run(model, blocks, destination_rows_of(batch), rows_of(batch.aggregated), labels);
  r.loss = own.loss;
  r.correct = own.correct;
  r.compute_s = t.seconds();
  synchronize_and_step(*model, optimizer, coll, &r);
  return r;
}

void PhaseTimes::add(const PhaseTimes& o) {
  sample += o.sample, fetch += o.fetch, wait += o.wait, compute += o.compute, allreduce += o.allreduce;
  sparse += o.sparse, step_cpu += o.step_cpu, allreduce_cpu += o.allreduce_cpu;
  sample_cpu += o.sample_cpu, fetch_cpu += o.fetch_cpu;
  steps += o.steps, seeds += o.seeds, edges += o.edges, correct += o.correct, loss += o.loss;
  if (blocks.size() < o.blocks.size()) blocks.resize(o.blocks.size());
  for (size_t i = 0; i < o.blocks.size(); ++i) {
    blocks[i].src += o.blocks[i].src, blocks[i].dst += o.blocks[i].dst, blocks[i].edges += o.blocks[i].edges;
  }
}

std::string PhaseTimes::split() const {
  std::string text = fmt::format("sample {:.3f}s fetch {:.3f}s wait {:.3f}s compute {:.3f}s all-reduce {:.3f}s",
                                 sample, fetch, wait, compute, allreduce);
  if (sparse > 0) text += fmt::format(" sparse update {:.3f}s", sparse);
  return text;
}



run::RunLog open_run_log(distributed::Context& ctx, const std::string& out_dir, const std::string& tool,
                    const nlohmann::json& config, bool append) {
  const bool logger = ctx.rank() == 0;
  if (logger) std::filesystem::create_directories(out_dir);
  run::RunLog log(out_dir + "/metrics.jsonl", logger, append);
  if (!logger) return log;
  const std::vector<std::string> args = process_arguments();
  nlohmann::json run = run::describe_job(ctx);
  run["tool"] = tool.empty() && !args.empty() ? std::filesystem::path(args[0]).filename().string() : tool;
  run["config"] = config;
  run["out_dir"] = std::filesystem::absolute(out_dir).lexically_normal().string();
  log.describe_run(run);
  return log;
}

std::string out_dir_or_default(const std::string& given, const std::string& fallback) {
  if (!given.empty()) return given;
  const char* run_dir = std::getenv("TESSERA_RUN_DIR");
  return run_dir != nullptr && *run_dir != '\0' ? run_dir : fallback;
}

nlohmann::json to_json(const NodeTrainOptions& o) {
  return {{"graph_name", o.graph_name}, {"ip_config", o.ip_config},   {"part_config", o.part_config},
          {"standalone", o.standalone}, {"num_epochs", o.num_epochs}, {"num_hidden", o.num_hidden},
          {"num_layers", o.num_layers}, {"fanout", o.fanout.to_string()}, {"eval_fanout", o.eval_fanout.to_string()},
          {"batch_size", o.batch_size}, {"eval_batch_size", o.eval_batch_size}, {"log_every", o.log_every},
          {"eval_every", o.eval_every}, {"lr", o.lr},                 {"dropout", o.dropout},
          {"weight_decay", o.weight_decay}, {"num_samplers", o.num_samplers}, {"seed", o.seed},
          {"num_threads", o.num_threads}, {"out", o.out_dir},         {"max_batches", o.max_batches},
          {"checkpoint_every", o.checkpoint.every}, {"keep_checkpoints", o.checkpoint.keep}};
}


double accuracy(distributed::Context& ctx, torch::nn::Module& model, const sampling::DistNeighborSampler& sampler,
                const std::vector<int64_t>& ids, sampling::LoaderOptions options,
                const std::function<torch::Tensor(const sampling::MiniBatch&)>& logits) {
  torch::NoGradGuard no_grad;
  model.eval();
  options.shuffle = false;
  sampling::DistDataLoader loader(ctx, sampler, ids, options);
  loader.start_epoch(0);
  int64_t counts[2] = {0, 0};  // correct, total
  sampling::MiniBatch batch;
  const int64_t batch_size = std::max<int64_t>(1, options.batch_size);
  Progress bar("evaluating", (static_cast<int64_t>(ids.size()) + batch_size - 1) / batch_size, stdout, ctx.rank() == 0);
  while (loader.next(&batch)) {
    counts[0] += logits(batch).argmax(1).eq(labels_of(batch)).sum().item<int64_t>();
    counts[1] += static_cast<int64_t>(batch.seeds.size());
    bar.add(1);
  }
  model.train();
  ctx.collectives().all_reduce_sum(counts, 2);
  return counts[1] == 0 ? -1.0 : static_cast<double>(counts[0]) / counts[1];
}

void validate(const NodeTrainOptions& o, std::vector<int64_t>* fanouts, std::vector<int64_t>* eval_fanouts) {
  check(EpochLoopOptions{o.num_epochs, o.log_every, o.eval_every});
  if (o.num_layers < 1) fail("--num-layers must be at least 1 (got {})", o.num_layers);
  if (o.num_hidden < 1) fail("--num-hidden must be at least 1 (got {})", o.num_hidden);
  if (o.batch_size < 1) fail("--batch-size must be at least 1 (got {})", o.batch_size);
  if (o.eval_batch_size < 1) fail("--eval-batch-size must be at least 1 (got {})", o.eval_batch_size);
  *fanouts = o.fanout.for_layers(o.num_layers, "--fanout");
  *eval_fanouts = (o.eval_fanout.empty() ? o.fanout : o.eval_fanout).for_layers(o.num_layers, "--eval-fanout");
}

std::unique_ptr<distributed::Context> join_job(const NodeTrainOptions& o) {
  distributed::InitOptions init;
  init.standalone = o.standalone;
  init.part_config = o.part_config;
  init.ip_config = o.ip_config;
  init.num_threads = o.num_threads;
  auto ctx = distributed::initialize(init);
  if (!o.graph_name.empty() && o.graph_name != ctx->config().graph_name)
    fail("--graph-name {} does not match the partitioned graph '{}' in {}", o.graph_name, ctx->config().graph_name,
         ctx->part_config_path());
  return ctx;
}

void warn_if_unreachable(const distributed::Context& ctx, const std::string& category) {
  if (ctx.rank() != 0) return;
  for (const std::string& ntype : ctx.config().labelled_types_without_in_edges())
    if (ntype == category) fmt::print(stderr, "{}\n", PartitionConfig::without_in_edges_warning(ntype));
}

int64_t count_classes(distributed::Context& ctx, const std::string& label_name) {
  distributed::DistTensor labels;
  try {
    labels = distributed::DistTensor::open(ctx, label_name);
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
  distributed::for_each_id_chunk(n * ctx.rank() / ctx.world_size(), n * (ctx.rank() + 1) / ctx.world_size(),
                          [&](int64_t, const std::vector<int64_t>& ids) {
                            const Array chunk = labels.pull(ids);
                            const int64_t* l = chunk.data<int64_t>();
                            for (size_t i = 0; i < ids.size(); ++i) max_label = std::max(max_label, l[i]);
                          });
  for (const auto& v : ctx.collectives().all_gather({max_label})) max_label = std::max(max_label, v.at(0));
  if (max_label < 0) fail("node data '{}' has no labels", label_name);
  return max_label + 1;
}

void broadcast_parameters(torch::nn::Module& model, distributed::Collectives& coll) {
  if (coll.size() == 1) return;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters()) {
    torch::Tensor c = p.contiguous();
    coll.broadcast(c.data_ptr<float>(), c.numel(), 0);
    p.copy_(c);
  }
}

void check_feature_cache(const FeatureCacheOptions& o) {
  if (!(o.cache_remote_features >= 0 && o.cache_remote_features <= 1))
    fail("--cache-remote-features must be a fraction in [0, 1] (got {})", o.cache_remote_features);
  if (o.feature_cache_mb < 0 || o.feature_cache_mb > (int64_t{1} << 30))
    fail("--feature-cache-mb must be 0 or more megabytes (got {})", o.feature_cache_mb);
}

distributed::RemoteRowCaches feature_caches(distributed::Context& ctx,
                                            const std::vector<store::TensorSpec>& tensors,
                                            const FeatureCacheOptions& o, run::RunLog& log) {
  // Each tensor's share of the budget: what its remote rows would take.
  std::vector<double> wanted;
  double total = 0;
  for (const store::TensorSpec& spec : tensors) {
    const IdSpace& space = ctx.book().space(spec.policy);
    const int local = ctx.local_part();
    const int64_t remote = space.size() - (local >= 0 ? space.starts[local + 1] - space.starts[local] : 0);
    wanted.push_back(static_cast<double>(remote) * static_cast<double>(spec.row_bytes()));
    total += wanted.back();
  }
  distributed::RemoteRowCaches caches;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const double share = total > 0 ? wanted[i] / total : 1.0;
    const auto budget = static_cast<int64_t>(static_cast<double>(o.feature_cache_mb << 20) * share);
    std::shared_ptr<const distributed::RemoteRowCache> cache =
        distributed::RemoteRowCache::build(ctx, tensors[i], o.cache_remote_features, budget);
    if (!cache) continue;
    log.line(fmt::format("feature cache: {} rows of other machines' nodes of {}, {:.1f} MB per trainer",
                         cache->num_rows(), tensors[i].name,
                         static_cast<double>(cache->num_rows() * tensors[i].row_bytes()) / 1e6));
    caches.push_back(std::move(cache));
  }
  return caches;
}

nlohmann::json feature_cache_summary(distributed::Context& ctx, const distributed::RemoteRowCaches& caches) {
  if (caches.empty()) return nlohmann::json::object();
  int64_t counts[3] = {0, 0, 0};
  for (const auto& cache : caches) {
    counts[0] += cache->num_rows();
    counts[1] += cache->remote_ids_found();
    counts[2] += cache->remote_ids_asked();
  }
  ctx.collectives().all_reduce_sum(counts, 3);
  return {{"feature_cache_rows", counts[0] / ctx.world_size()},
          {"feature_cache_remote_hit_rate", counts[2] == 0 ? 0.0 : static_cast<double>(counts[1]) / counts[2]}};
}

sampling::LoaderOptions loader_options(const distributed::Context& ctx, const NodeTrainOptions& o) {
  sampling::LoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.seed = o.seed;
  lo.num_samplers = o.num_samplers >= 0 ? o.num_samplers : ctx.env().num_samplers;
  return lo;
}

std::vector<int64_t> every_trainer_gets_seeds(distributed::Context& ctx, const std::vector<int64_t>& share) {
  const std::vector<std::vector<int64_t>> shares = ctx.collectives().all_gather(share);
  bool someone_without = false;
  for (const auto& s : shares) someone_without = someone_without || s.empty();
  if (!someone_without) return share;
  std::vector<int64_t> all;
  for (const auto& s : shares) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  return all;
}

int64_t equalize_steps(distributed::Context& ctx, sampling::DistDataLoader& loader, int64_t max_batches,
                       int64_t* total_seeds) {
  int64_t steps = loader.batches_per_epoch();
  *total_seeds = 0;
  for (const auto& v : ctx.collectives().all_gather({loader.batches_per_epoch(), loader.num_seeds()})) {
    steps = std::min(steps, v.at(0));
    *total_seeds += v.at(1);
  }
  if (max_batches >= 0) steps = std::min(steps, max_batches);
  if (*total_seeds == 0) fail("no training nodes: the graph's train_mask selects none");
  if (steps == 0) fail("a trainer has no training batch (use every_trainer_gets_seeds)");
  loader.limit_batches(steps);
  return steps;
}

torch::Tensor rows_of(const Array& rows) {
  const int64_t n = rows.shape()[0];
  return torch::from_blob(const_cast<void*>(rows.raw()), {n, rows.numel() / std::max<int64_t>(1, n)},
                          torch::kFloat32);
}

torch::Tensor features_of(const sampling::MiniBatch& batch) { return rows_of(batch.features); }

std::vector<nn::BlockTensors> blocks_of(const sampling::MiniBatch& batch) {
  std::vector<nn::BlockTensors> blocks;
  for (const sampling::Block& b : batch.blocks) blocks.push_back(nn::block_view(b.indptr, b.indices, b.num_src()));
  return blocks;
}

torch::Tensor sage_logits(nn::Sage& model, const sampling::MiniBatch& batch, const std::vector<nn::BlockTensors>& blocks) {
  if (batch.aggregated.empty_handle()) return model->forward(blocks, features_of(batch));
  return model->forward_aggregated(blocks, destination_rows_of(batch), rows_of(batch.aggregated));
}

torch::Tensor labels_of(const sampling::MiniBatch& batch) {
  return torch::from_blob(const_cast<void*>(batch.labels.raw()), {batch.labels.shape()[0]}, torch::kInt64);
}

}  // namespace tessera::train
