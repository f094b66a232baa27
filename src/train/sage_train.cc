#include "tessera/train/sage_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/base/error.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/node_split.h"
#include "tessera/nn/sage.h"
#include "tessera/nn/sage_step.h"
#include "tessera/run/run_log.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/train/accuracy.h"
#include "tessera/train/epoch_loop.h"
#include "tessera/train/feature_cache_setup.h"
#include "tessera/train/fused_adam.h"
#include "tessera/train/node_job.h"
#include "tessera/train/run_output.h"
#include "train/sage_task.h"

namespace tessera::train {
int run_sage_training(const SageTrainOptions& o) {
  std::vector<int64_t> fanouts, eval_fanouts;
  validate(o, &fanouts, &eval_fanouts);
  try {
    nn::sage_reduce(o.aggregator);
  } catch (const Error& e) {
    fail("--aggregator: {}", e.what());
  }
  check(o.checkpoint);
  check_feature_cache(o);
  auto ctx = join_job(o);
  distributed::DistGraph g(*ctx);
  if (g.ntypes().size() != 1)
    fail("{} has {} node types: GraphSAGE here is for homogeneous graphs (use tessera train rgcn)", ctx->part_config_path(),
         g.ntypes().size());
  const std::string& ntype = g.ntypes()[0];
  warn_if_unreachable(*ctx, ntype);
  const bool logger = ctx->rank() == 0;
  const std::string out_dir = out_dir_or_default(o.out_dir, "sage-" + ctx->config().graph_name);
  nlohmann::json config = to_json(o);
  config.update({{"aggregator", o.aggregator}, {"replace", o.replace}, {"cache_remote_features", o.cache_remote_features}});
  run::RunLog log = open_run_log(*ctx, out_dir, "train sage", config, resuming(o.checkpoint));

  const distributed::DistTensor feat = input_features(g);
  const nn::SageOptions mo = sage_options(o, feat.spec().row_elems(),
                                          count_classes(*ctx, store::node_tensor_name(ntype, "label")), o.aggregator);

  distributed::NodeSplits split = distributed::split_masks(*ctx, g);
  split.train = every_trainer_gets_seeds(*ctx, split.train);

  sampling::SamplerOptions so;
  so.fanouts = fanouts;
  so.replace = o.replace;
  const sampling::DistNeighborSampler sampler(*ctx, so);
  const sampling::DistNeighborSampler eval_sampler = sampler.with_fanouts(eval_fanouts);

  sampling::LoaderOptions lo = loader_options(*ctx, o);
  // 'feat' is read-only here, so training and evaluation share one cache.
  lo.feature_caches = feature_caches(*ctx, {feat.spec()}, o, log);
  SageTask::aggregate_inputs(mo, &lo);
  sampling::DistDataLoader loader(*ctx, sampler, split.train, lo);
  int64_t total_train = 0;
  const int64_t steps = equalize_steps(*ctx, loader, o.max_batches, &total_train);

  torch::manual_seed(o.seed);
  nn::Sage model(mo);
  broadcast_parameters(*model, ctx->collectives());
  FusedAdam optimizer(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  SageTask task(model, optimizer, ctx->collectives());

  log.line(fmt::format("{}: {} trainers, {} training nodes ({} here), {} steps per epoch of {} seeds, fanout {}, "
                       "{} sampler threads, model {} -> {} x{} -> {} classes",
                       ctx->config().graph_name, ctx->world_size(), total_train, split.train.size(), steps, o.batch_size, o.fanout.to_string(), lo.num_samplers, mo.in_feats, mo.hidden,
                       mo.num_layers, mo.num_classes));

  const std::vector<std::string> layer_kernels = nn::sage_layer_kernels(mo, lo.aggregate_inputs.has_value());
  if (std::find(layer_kernels.begin(), layer_kernels.end(), "BLAS") != layer_kernels.end())
    log.line(fmt::format("layer kernels {}: a layer wider than 48 (hidden units or classes), or any layer on a CPU "
                         "without AVX-512, runs the BLAS's GEMMs, slower at mini-batch shapes than the narrow kernels",
                         fmt::join(layer_kernels, ", ")));

  // Accuracy over `ids` (this trainer's share), summed over all trainers.
  sampling::LoaderOptions elo = lo;
  elo.batch_size = o.eval_batch_size;
  auto evaluate = [&](const std::vector<int64_t>& ids) {
    return accuracy(*ctx, *model, eval_sampler, ids, elo,
                    [&](const sampling::MiniBatch& batch) { return task.logits(batch); });
  };
  EpochLoopOptions lo_options{o.num_epochs, o.log_every, o.eval_every};
  TrainingCheckpoints checkpoints(ctx.get(), o.checkpoint, checkpoint_dir(o.checkpoint, out_dir), log,
                                  dense_state(*model, optimizer));
  lo_options.checkpoints = &checkpoints;
  EpochLoop loop(*ctx, log, lo_options);
  model->train();
  RunSummary summary = loop.run(
      loader, steps, [&](const sampling::MiniBatch& batch) { return task.step(batch); },
      [&] { return std::make_pair(evaluate(split.val), evaluate(split.test)); });

  if (logger) nn::save_sage(model, mo, out_dir + "/model");
  summary.model_dir = out_dir + "/model";
  summary.extra = feature_cache_summary(*ctx, lo.feature_caches);
  summary.extra["layer_kernels"] = layer_kernels;
  loop.finish(summary);
  return 0;
}

}  // namespace tessera::train
