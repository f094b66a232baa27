#include "tessera/train/rgcn_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "tessera/nn/rgcn.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/node_split.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/run/run_log.h"
#include "tessera/base/error.h"
#include "tessera/train/accuracy.h"
#include "tessera/train/epoch_loop.h"
#include "tessera/train/feature_cache_setup.h"
#include "tessera/train/fused_adam.h"
#include "tessera/train/node_job.h"
#include "tessera/train/run_output.h"
#include "train/rgcn_task.h"

namespace tessera::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The labelled node type: the flag's, or the only type with labels.
std::string predict_category(const PartitionConfig& config, const std::string& flag) {
  std::vector<std::string> labelled;
  for (const auto& [ntype, schema] : config.node_feat_schema)
    if (schema.count("label") && schema.count("train_mask")) labelled.push_back(ntype);
  if (!flag.empty()) {
    if (std::find(labelled.begin(), labelled.end(), flag) == labelled.end())
      fail("--predict-category {}: that node type has no labels and train_mask (labelled types: {})", flag,
           fmt::join(labelled, ", "));
    return flag;
  }
  if (labelled.size() != 1)
    fail("the graph has {} labelled node types ({}): name one with --predict-category", labelled.size(),
         fmt::join(labelled, ", "));
  return labelled[0];
}

// Node types whose "feat" can be an input (float32 vectors); the others learn embeddings.
std::map<std::string, int64_t> feature_dims(const PartitionConfig& config) {
  std::map<std::string, int64_t> dims;
  for (const auto& [ntype, schema] : config.node_feat_schema) {
    const auto it = schema.find("feat");
    if (it != schema.end() && it->second.dtype == DType::kFloat32 && it->second.row_shape.size() == 1)
      dims[ntype] = it->second.row_shape[0];
  }
  return dims;
}

}  // namespace

int run_rgcn_training(const RgcnTrainOptions& o) {
  std::vector<int64_t> fanouts, eval_fanouts;
  validate(o, &fanouts, &eval_fanouts);
  if (o.fanout_mode != "total" && o.fanout_mode != "per-etype")
    fail("--fanout-mode '{}': expected total or per-etype", o.fanout_mode);
  if (o.sparse_optimizer != "adam" && o.sparse_optimizer != "adagrad")
    fail("--sparse-optimizer '{}': expected adam or adagrad", o.sparse_optimizer);
  check(o.checkpoint);
  check_feature_cache(o);
  auto ctx = join_job(o);
  const PartitionConfig& config = ctx->config();
  distributed::DistGraph g(*ctx);
  const std::string category = predict_category(config, o.predict_category);
  const int category_type = static_cast<int>(std::find(config.ntypes.begin(), config.ntypes.end(), category) -
                                             config.ntypes.begin());
  warn_if_unreachable(*ctx, category);
  const bool logger = ctx->rank() == 0;
  const std::string out_dir = out_dir_or_default(o.out_dir, "rgcn-" + config.graph_name);
  nlohmann::json run_config = to_json(o);
  run_config.update({{"dataset", o.dataset}, {"predict_category", category}, {"num_bases", o.num_bases},
                     {"fanout_mode", o.fanout_mode}, {"sparse_lr", o.sparse_lr},
                     {"sparse_optimizer", o.sparse_optimizer}, {"self_loop", o.self_loop},
                     {"layer_norm", o.layer_norm}, {"cache_remote_features", o.cache_remote_features}});
  run::RunLog log = open_run_log(*ctx, out_dir, "train rgcn", run_config, resuming(o.checkpoint));

  nn::RgcnOptions mo;
  mo.hidden = o.num_hidden;
  mo.num_classes = count_classes(*ctx, store::node_tensor_name(category, "label"));
  mo.num_rels = static_cast<int64_t>(config.etypes.size());
  mo.num_bases = o.num_bases;
  mo.num_layers = o.num_layers;
  mo.dropout = o.dropout;
  mo.self_loop = o.self_loop;
  mo.layer_norm = o.layer_norm;
  mo.feature_dims = feature_dims(config);
  nn::validate(mo);

  // A learnable embedding per node of every featureless type, on the servers.
  std::vector<std::unique_ptr<distributed::DistEmbedding>> embeddings(config.ntypes.size());
  std::vector<const distributed::DistEmbedding*> embedding_list;
  sampling::LoaderOptions lo = loader_options(*ctx, o);
  lo.seed_ntype = category;
  for (size_t t = 0; t < config.ntypes.size(); ++t) {
    const std::string& ntype = config.ntypes[t];
    if (mo.feature_dims.count(ntype)) {
      lo.typed_inputs[ntype] = store::node_tensor_name(ntype, "feat");
      continue;
    }
    embeddings[t] = std::make_unique<distributed::DistEmbedding>(
        *ctx, "rgcn-emb-" + ntype, o.num_hidden, ctx->book().node_policy(static_cast<int>(t)),
        store::Initializer{"uniform", -1, 1, o.seed * 1000 + t});
    embedding_list.push_back(embeddings[t].get());
    lo.typed_inputs[ntype] = embeddings[t]->name();
  }
  // Typed features are read-only partition data: each type's remote rows of
  // largest in-degree are kept here, for training and evaluation alike.
  std::vector<store::TensorSpec> featured;
  for (const auto& [ntype, dim] : mo.feature_dims)
    featured.push_back(distributed::DistTensor::open(*ctx, store::node_tensor_name(ntype, "feat")).spec());
  lo.feature_caches = feature_caches(*ctx, featured, o, log);
  std::unique_ptr<distributed::SparseOptimizer> sparse_optimizer;
  if (!embedding_list.empty()) {
    if (o.sparse_optimizer == "adam") sparse_optimizer = std::make_unique<distributed::SparseAdam>(*ctx, embedding_list, o.sparse_lr);
    else sparse_optimizer = std::make_unique<distributed::SparseAdagrad>(*ctx, embedding_list, o.sparse_lr);
  }

  // Seeds: this trainer's share of the category's split, as homogeneous IDs.
  distributed::NodeSplits split = distributed::split_masks(*ctx, g, category);
  split.train = every_trainer_gets_seeds(*ctx, split.train);
  for (std::vector<int64_t>* ids : {&split.train, &split.val, &split.test})
    for (int64_t& id : *ids) id = ctx->book().homogeneous_node(category_type, id);
  const std::vector<int64_t>& train_ids = split.train;
  const std::vector<int64_t>& val_ids = split.val;
  const std::vector<int64_t>& test_ids = split.test;

  sampling::SamplerOptions so;
  so.fanouts = fanouts;
  so.per_etype = o.fanout_mode == "per-etype";
  const sampling::DistNeighborSampler sampler(*ctx, so);
  const sampling::DistNeighborSampler eval_sampler = sampler.with_fanouts(eval_fanouts);

  sampling::DistDataLoader loader(*ctx, sampler, train_ids, lo);
  int64_t total_train = 0;
  const int64_t steps = equalize_steps(*ctx, loader, o.max_batches, &total_train);

  torch::manual_seed(o.seed);
  nn::Rgcn model(mo);
  broadcast_parameters(*model, ctx->collectives());
  FusedAdam optimizer(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  RgcnTask task(config, model, optimizer, ctx->collectives(), embeddings, sparse_optimizer.get());

  // Accuracy over `ids` (this trainer's share), summed over all trainers;
  // -1 when the split is empty everywhere.
  sampling::LoaderOptions elo = lo;
  elo.batch_size = o.eval_batch_size;
  auto evaluate = [&](const std::vector<int64_t>& ids) {
    if (sparse_optimizer) sparse_optimizer->flush();  // evaluate the embeddings as trained
    return accuracy(*ctx, *model, eval_sampler, ids, elo,
                    [&](const sampling::MiniBatch& batch) { return task.logits(batch); });
  };

  log.line(fmt::format("{}: {} trainers, {} training {} nodes ({} here), {} steps per epoch of {} seeds, fanout {} "
                       "({}), {} sampler threads; {} relations, {} bases, {} hidden x{}, {} classes; embeddings for "
                       "{} of {} node types",
                       config.graph_name, ctx->world_size(), total_train, category, train_ids.size(), steps,
                       o.batch_size, o.fanout.to_string(), o.fanout_mode, lo.num_samplers, mo.num_rels, mo.num_bases, mo.hidden,
                       mo.num_layers, mo.num_classes, embedding_list.size(), config.ntypes.size()));

  EpochLoopOptions loop_options{o.num_epochs, o.log_every, o.eval_every};
  CheckpointState state = dense_state(*model, optimizer);
  if (sparse_optimizer) {
    state.server_tensors = sparse_optimizer->tensors();
    state.before_save = [&] { sparse_optimizer->flush(); };
  }
  TrainingCheckpoints checkpoints(ctx.get(), o.checkpoint, checkpoint_dir(o.checkpoint, out_dir), log, std::move(state));
  loop_options.checkpoints = &checkpoints;
  EpochLoop loop(*ctx, log, loop_options);
  model->train();
  RunSummary summary = loop.run(
      loader, steps, [&](const sampling::MiniBatch& batch) { return task.step(batch); },
      [&] { return std::make_pair(evaluate(val_ids), evaluate(test_ids)); });

  if (sparse_optimizer) sparse_optimizer->flush();
  ctx->collectives().barrier();  // every trainer's last updates have landed before trainer 0 saves
  if (logger) {
    nn::save_rgcn(model, out_dir + "/model");
    fs::create_directories(out_dir + "/embeddings");
    for (size_t t = 0; t < embeddings.size(); ++t)
      if (embeddings[t]) embeddings[t]->save(out_dir + "/embeddings/" + config.ntypes[t] + ".npy");
  }
  summary.model_dir = out_dir + "/model";
  summary.extra = feature_cache_summary(*ctx, lo.feature_caches);
  loop.finish(summary);
  return 0;
}

}  // namespace tessera::train
