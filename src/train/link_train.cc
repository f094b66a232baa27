#include "tessera/train/link_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/node_split.h"
#include "tessera/io/npy.h"
#include "tessera/nn/model_files.h"
#include "tessera/run/run_log.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/train/feature_cache_setup.h"
#include "tessera/train/fused_adam.h"
#include "tessera/train/node_job.h"
#include "tessera/train/run_output.h"
#include "train/embedding_probe.h"
#include "train/link_task.h"
#include "train/sage_task.h"

namespace tessera::train {
namespace {

// The partition's held-out pairs of `split` ([n, 2], flattened), or none.
std::vector<int64_t> held_out(const PartitionConfig& config, const std::string& split) {
  const auto it = config.held_out_edges.find(split);
  if (it == config.held_out_edges.end()) return {};
  const Array a = read_npy_checked(config.path(it->second), DType::kInt64, 2, split + " edges");
  if (a.ndim() != 2 || a.dim(1) != 2) fail("{}: held-out edges must be [n, 2], not {}", config.path(it->second), a.shape_string());
  std::vector<int64_t> pairs(a.data<int64_t>(), a.data<int64_t>() + a.numel());
  for (const int64_t v : pairs)
    if (v < 0 || v >= config.num_nodes)
      fail("{}: node {} is outside the graph's {} nodes", config.path(it->second), v, config.num_nodes);
  return pairs;
}

sampling::EdgeBatchOptions::Exclude exclude_mode(const std::string& name) {
  using Exclude = sampling::EdgeBatchOptions::Exclude;
  if (name == "reverse") return Exclude::kSelfAndReverse;
  if (name == "self") return Exclude::kSelf;
  if (name == "none") return Exclude::kNone;
  fail("--exclude '{}': expected reverse (the batch's edges both ways, default), self or none", name);
}

// One value per node of a node feature, as int64 (a mask or a class label).
torch::Tensor node_column(const distributed::DistGraph& g, const std::string& name) {
  const distributed::DistTensor t = g.ndata(name);
  if (t.spec().row_elems() != 1) fail("node data '{}' must hold one value per node for --logistic-regression", name);
  std::vector<int64_t> all(g.num_nodes());
  for (int64_t v = 0; v < g.num_nodes(); ++v) all[v] = v;
  const Array rows = t.pull(all);
  torch::Tensor out = torch::empty({g.num_nodes()}, torch::kInt64);
  for (int64_t v = 0; v < g.num_nodes(); ++v) {
    switch (rows.dtype()) {
      case DType::kBool:
      case DType::kUInt8: out[v] = static_cast<int64_t>(static_cast<const uint8_t*>(rows.raw())[v]); break;
      case DType::kInt64: out[v] = rows.data<int64_t>()[v]; break;
      case DType::kInt32: out[v] = rows.data<int32_t>()[v]; break;
      default: fail("node data '{}' is {}; --logistic-regression reads masks and integer labels", name,
                    dtype_name(rows.dtype()));
    }
  }
  return out;
}

// DGL's protocol for unsupervised embeddings: embed the labelled nodes, fit on the train_mask ones.
ProbeAccuracy probe_embeddings(distributed::Context& ctx, const distributed::DistGraph& g, LinkModel& model,
                               const sampling::DistNeighborSampler& sampler, const sampling::LoaderOptions& loader) {
  torch::NoGradGuard no_grad;
  model->eval();
  const torch::Tensor labels = node_column(g, "label");
  torch::Tensor split[3];
  const char* masks[3] = {"train_mask", "val_mask", "test_mask"};
  for (int k = 0; k < 3; ++k) split[k] = node_column(g, masks[k]).nonzero().flatten();
  const torch::Tensor nodes = std::get<0>(torch::_unique(torch::cat({split[0], split[1], split[2]})));
  const std::vector<int64_t> ids(nodes.data_ptr<int64_t>(), nodes.data_ptr<int64_t>() + nodes.numel());
  const torch::Tensor emb = embed_nodes(ctx, model, sampler, ids, loader);
  auto rows = [&](const torch::Tensor& s) { return torch::searchsorted(nodes, s); };
  return logistic_regression_probe(emb, labels.index_select(0, nodes), rows(split[0]), rows(split[1]),
                                   rows(split[2]));
}

void check_link_options(const LinkTrainOptions& o) {
  if (o.num_negs < 1) fail("--num-negs must be at least 1 (got {})", o.num_negs);
  if (o.eval_negatives < 1) fail("--eval-negatives must be at least 1 (got {})", o.eval_negatives);
  if (o.decoder != "dot" && o.decoder != "mlp") fail("--decoder '{}': expected dot or mlp", o.decoder);
  exclude_mode(o.exclude);
  check(o.checkpoint);
}

}  // namespace

int run_link_training(const LinkTrainOptions& o) {
  std::vector<int64_t> fanouts, eval_fanouts;
  validate(o, &fanouts, &eval_fanouts);
  check_link_options(o);
  check_feature_cache(o);
  auto ctx = join_job(o);
  distributed::DistGraph g(*ctx);
  if (g.ntypes().size() != 1 || g.etypes().size() != 1)
    fail("{} has {} node types and {} edge types: tessera train link is for graphs of one of each",
         ctx->part_config_path(), g.ntypes().size(), g.etypes().size());
  if (o.logistic_regression)  // refused before training, not after it
    for (const char* name : {"label", "train_mask", "val_mask", "test_mask"})
      if (!ctx->config().node_feat_schema.begin()->second.count(name))
        fail("--logistic-regression needs node data '{}' ({} has none)", name, ctx->part_config_path());
  const std::vector<int64_t> valid = held_out(ctx->config(), "valid"), test = held_out(ctx->config(), "test");
  if (test.empty())
    fail("{} has no held-out test edges to rank: partition with --test-edges (and --valid-edges)",
         ctx->part_config_path());
  const std::string out_dir = out_dir_or_default(o.out_dir, "link-" + ctx->config().graph_name);
  nlohmann::json config = to_json(o);
  config.update({{"decoder", o.decoder}, {"num_negs", o.num_negs}, {"eval_negatives", o.eval_negatives},
                 {"exclude", o.exclude}, {"logistic_regression", o.logistic_regression},
                 {"cache_remote_features", o.cache_remote_features}});
  run::RunLog log = open_run_log(*ctx, out_dir, "train link", config, resuming(o.checkpoint));

  const distributed::DistTensor feat = input_features(g);
  // The encoder's output is the embedding the decoder scores.
  const nn::SageOptions mo = sage_options(o, feat.spec().row_elems(), o.num_hidden, "mean");

  sampling::SamplerOptions so;
  so.fanouts = fanouts;
  const sampling::DistNeighborSampler sampler(*ctx, so);
  const sampling::DistNeighborSampler eval_sampler = sampler.with_fanouts(eval_fanouts);

  // This trainer's even share of the training graph's edges.
  const auto [first, last] = distributed::even_range(ctx->config().num_edges, ctx->rank(), ctx->world_size());
  std::vector<int64_t> train_edges(last - first);
  for (int64_t e = first; e < last; ++e) train_edges[e - first] = e;
  sampling::LoaderOptions lo = loader_options(*ctx, o);
  lo.label = "";
  // 'feat' is read-only, so training, ranking and the embedding probe share one cache.
  lo.feature_caches = feature_caches(*ctx, {feat.spec()}, o, log);
  auto edges = std::make_shared<sampling::EdgeBatchOptions>();
  edges->negatives.mode = sampling::NegativeSampling::Mode::kPerSource;
  edges->negatives.k = o.num_negs;
  edges->exclude = exclude_mode(o.exclude);
  lo.edges = edges;
  sampling::DistDataLoader loader(*ctx, sampler, train_edges, lo);
  int64_t total_edges = 0;
  const int64_t steps = equalize_steps(*ctx, loader, o.max_batches, &total_edges);

  torch::manual_seed(o.seed);
  LinkModel model(mo, o.decoder);
  broadcast_parameters(*model, ctx->collectives());
  FusedAdam optimizer(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  log.line(fmt::format("{}: {} trainers, {} training edges ({} here), {} steps per epoch of {} edges x (1 + {} "
                       "negatives), fanout {}, {} sampler threads, {} {} held-out edges, model {} -> {} x{} -> {} "
                       "decoder",
                       ctx->config().graph_name, ctx->world_size(), total_edges, train_edges.size(), steps,
                       o.batch_size, o.num_negs, o.fanout.to_string(), lo.num_samplers, valid.size() / 2,
                       test.size() / 2, mo.in_feats, mo.hidden, mo.num_layers, o.decoder));

  RankingOptions ranking;
  ranking.negatives = o.eval_negatives;
  ranking.seed = o.seed + 0x5eed;
  ranking.loader = lo;
  ranking.loader.batch_size = o.eval_batch_size;
  ranking.loader.edges = nullptr;
  auto evaluate = [&] {
    return std::make_pair(valid.empty() ? RankMetrics{} : rank_held_out(*ctx, model, eval_sampler, valid, ranking),
                          rank_held_out(*ctx, model, eval_sampler, test, ranking));
  };
  TrainLoopOptions lopt;
  lopt.unit = TrainLoopOptions::Unit::kEpoch;
  lopt.total = o.num_epochs;
  lopt.log_every = o.log_every;
  lopt.eval_every = o.eval_every;
  TrainingCheckpoints checkpoints(ctx.get(), o.checkpoint, checkpoint_dir(o.checkpoint, out_dir), log,
                                  dense_state(*model, optimizer));
  lopt.checkpoints = &checkpoints;
  TrainLoop loop(log, lopt);
  LinkPredictionTask task(*ctx, loader, steps, model, optimizer, evaluate);
  model->train();
  loop.run(task);

  if (ctx->rank() == 0) {
    std::filesystem::create_directories(out_dir + "/model");
    torch::serialize::OutputArchive archive;
    model->save(archive);
    nn::save_archive(archive, out_dir + "/model/model.pt");
  }
  ProbeAccuracy probe;
  if (o.logistic_regression && ctx->rank() == 0) {
    probe = probe_embeddings(*ctx, g, model, eval_sampler, ranking.loader);
    log.line(fmt::format("logistic regression on the embeddings: validation accuracy {:.4f}, test accuracy {:.4f}",
                         probe.val, probe.test));
  }
  const PhaseTimes& all = task.totals;
  const int64_t epochs = o.num_epochs - loop.first_unit();
  nlohmann::json record = {{"val_mrr", task.val.mrr},
                           {"test_mrr", task.test.mrr},
                           {"test_hits@1", task.test.hits1},
                           {"test_hits@10", task.test.hits10},
                           {"test_hits@50", task.test.hits50},
                           {"test_edges", task.test.edges},
                           {"loss", task.last_loss},
                           {"epochs", epochs},
                           {"epoch_time_s", task.total_epoch_s / std::max<int64_t>(1, epochs)},
                           {"steps_per_epoch", steps},
                           {"trainers", ctx->world_size()},
                           {"mini_batches_per_s", all.steps / task.total_epoch_s},
                           {"wait_fraction", all.wait / task.total_epoch_s},
                           {"model", out_dir + "/model"}};
  if (o.logistic_regression && ctx->rank() == 0)
    record.update({{"embedding_val_acc", probe.val}, {"embedding_test_acc", probe.test}});
  record.update(all.times());
  record.update(feature_cache_summary(*ctx, lo.feature_caches));
  ctx->finalize();
  loop.finish(record);
  return 0;
}

}  // namespace tessera::train
