#include "tessera/train/trainer.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "tessera/distributed/grad_sync.h"
#include "tessera/distributed/dist_tensor.h"
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
  seeds += static_cast<int64_t>(b.seeds.size());
  for (const auto& block : b.blocks) edges += block.num_edges();
}

void PhaseTimes::add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step) {
  add_batch(b);
  wait += wait_s;
  compute += step.compute_s;
  allreduce += step.allreduce_s;
  sparse += step.sparse_s;
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

StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels) {
  StepResult r;
  Timer t;
  const torch::Tensor logits = forward();
  const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
  optimizer.zero_grad();
  loss.backward();
  r.compute_s = t.seconds();
  t.reset();
  distributed::allreduce_gradients(model, coll);
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
                           {"peak_rss_mb", peak_rss_bytes() / 1e6},
                           {"model", s.model_dir}};
  record.update(all.times());
  record.update(s.extra);
  return record;
}

void check(const EpochLoopOptions& o) {
  if (o.num_epochs < 1) fail("--num-epochs must be at least 1 (got {})", o.num_epochs);
  if (o.first_epoch < 0 || o.first_epoch >= o.num_epochs)
    fail("internal: a run of {} epochs cannot start after epoch {}", o.num_epochs, o.first_epoch);
  if (o.log_every < 1 || o.eval_every < 1)
    fail("--log-every and --eval-every must be at least 1 (got {} and {})", o.log_every, o.eval_every);
}

EpochLoop::EpochLoop(distributed::Context& ctx, RunLog& log, EpochLoopOptions options)
    : ctx_(ctx), log_(log), options_(options) {
  check(options_);
}

RunSummary EpochLoop::run(sampling::DistDataLoader& loader, int64_t steps_per_epoch, const StepFn& step,
                          const EvalFn& evaluate) {
  summary_ = RunSummary{};
  summary_.epochs = options_.num_epochs - options_.first_epoch;  // run by this process
  summary_.steps_per_epoch = steps_per_epoch;
  summary_.trainers = ctx_.world_size();
  for (int epoch = options_.first_epoch; epoch < options_.num_epochs; ++epoch) {
    Timer epoch_timer;
    const HostCpu cpu_at_start = host_cpu();
    PhaseTimes ep, window;
    loader.start_epoch(epoch);
    sampling::MiniBatch batch;
    for (int64_t s = 0;; ++s) {
      Timer t;
      if (!loader.next(&batch)) break;
      const double wait = t.seconds();
      const StepResult r = with_context(
          [&] {
            return fmt::format("training step {} of epoch {} on trainer {} (batch of {} seeds, {} input nodes)", s + 1,
                               epoch, ctx_.rank(), batch.seeds.size(),
                               batch.blocks.empty() ? 0 : batch.blocks.front().num_src());
          },
          [&] { return step(batch); });
      ep.add_step(batch, wait, r);
      window.add_step(batch, wait, r);
      log_.progress(epoch, s + 1, steps_per_epoch);
      if ((s + 1) % options_.log_every == 0) {
        const double secs = window.wait + window.compute + window.allreduce + window.sparse;
        log_.line(fmt::format("Epoch {:05d} | Step {:05d} | Loss {:.4f} | Train Acc {:.4f} | Speed (seeds/s) {:.1f} | "
                              "Edges/s {:.3g} | {}",
                              epoch, s + 1, window.loss / window.steps,
                              static_cast<double>(window.correct) / window.seeds, window.seeds / secs,
                              window.edges / secs, window.split()));
        window = PhaseTimes{};
      }
    }
    const double epoch_s = epoch_timer.seconds();
    const double cpu_busy = host_cpu().busy_since(cpu_at_start);
    summary_.total_epoch_s += epoch_s;
    busy_s_ += cpu_busy * epoch_s;
    summary_.loss = ep.loss / std::max<int64_t>(1, ep.steps);
    summary_.train_acc = static_cast<double>(ep.correct) / std::max<int64_t>(1, ep.seeds);
    all_.add(ep);
    nlohmann::json mine = {{"rank", ctx_.rank()},
                           {"process", ctx_.env().label()},
                           {"host", host_name()},
                           {"steps", ep.steps},
                           {"seeds_per_s", ep.seeds / epoch_s},
                           {"mini_batches_per_s", ep.steps / epoch_s},
                           {"epoch_time_s", epoch_s},
                           {"peak_rss_mb", peak_rss_bytes() / 1e6}};
    mine.update(ep.times());
    nlohmann::json record = {{"epoch", epoch},
                             {"loss", summary_.loss},
                             {"train_acc", summary_.train_acc},
                             {"epoch_time_s", epoch_s},
                             {"steps", ep.steps},
                             {"seeds_per_s", ep.seeds / epoch_s},
                             {"edges_per_s", ep.edges / epoch_s},
                             {"wait_fraction", ep.wait / epoch_s},
                             {"host_cpu_busy", cpu_busy}};
    record.update(ep.times());
    record["per_trainer"] = gather_records(ctx_.collectives(), mine);
    std::string eval_text;
    if ((epoch + 1) % options_.eval_every == 0 || epoch + 1 == options_.num_epochs) {
      std::tie(summary_.val_acc, summary_.test_acc) = with_context(
          [&] { return fmt::format("evaluating after epoch {} on trainer {}", epoch, ctx_.rank()); }, evaluate);
      record["val_acc"] = summary_.val_acc;
      record["test_acc"] = summary_.test_acc;
      eval_text = fmt::format(" | Val Acc {:.4f} | Test Acc {:.4f}", summary_.val_acc, summary_.test_acc);
    }
    log_.metrics(record);
    log_.line(fmt::format("Epoch {:05d} | Time {:.3f}s | Loss {:.4f} | Train Acc {:.4f} | {:.1f} seeds/s | {:.1f} "
                          "mini-batches/s | {} | host CPU {:.0f}% busy{}",
                          epoch, epoch_s, summary_.loss, summary_.train_acc, ep.seeds / epoch_s, ep.steps / epoch_s,
                          ep.split(), 100 * cpu_busy, eval_text));
    if (options_.after_epoch) options_.after_epoch(epoch + 1);
  }
  return summary_;
}

void EpochLoop::finish(const RunSummary& summary) {
  const nlohmann::json record = final_record(summary, *this);
  ctx_.finalize();
  log_.final_metrics(record);
}

RunLog open_run_log(distributed::Context& ctx, const std::string& out_dir, const std::string& tool,
                    const nlohmann::json& config, bool append) {
  const bool logger = ctx.rank() == 0;
  if (logger) std::filesystem::create_directories(out_dir);
  RunLog log(out_dir + "/metrics.jsonl", logger, append);
  if (!logger) return log;
  const std::vector<std::string> args = process_arguments();
  nlohmann::json run = describe_job(ctx);
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

torch::Tensor labels_of(const sampling::MiniBatch& batch) {
  return torch::from_blob(const_cast<void*>(batch.labels.raw()), {batch.labels.shape()[0]}, torch::kInt64);
}

}  // namespace tessera::train
