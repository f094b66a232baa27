#include "tessera/train/sage_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "../nn/sage.h"
#include "train_common.h"
#include "tessera/dist/context.h"
#include "tessera/dist/dist_graph.h"
#include "tessera/dist/node_split.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/train/run_log.h"
#include "tessera/util/error.h"
#include "tessera/util/timer.h"

namespace tessera::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<nn::BlockTensors> block_tensors(const sampling::MiniBatch& batch) {
  std::vector<nn::BlockTensors> blocks;
  for (const sampling::Block& b : batch.blocks) blocks.push_back(nn::block_view(b.indptr, b.indices, b.num_src()));
  return blocks;
}

// Accuracy over `ids` (this trainer's share), summed over all trainers.
double evaluate(dist::Context& ctx, nn::Sage& model, const sampling::DistNeighborSampler& sampler,
                const std::vector<int64_t>& ids, const SageTrainOptions& o, int num_samplers) {
  torch::NoGradGuard no_grad;
  model->eval();
  sampling::LoaderOptions lo;
  lo.batch_size = o.batch_size_eval;
  lo.shuffle = false;
  lo.num_samplers = num_samplers;
  sampling::DistDataLoader loader(ctx, sampler, ids, lo);
  loader.start_epoch(0);
  int64_t counts[2] = {0, 0};  // correct, total
  sampling::MiniBatch batch;
  while (loader.next(&batch)) {
    const torch::Tensor logits = model->forward(block_tensors(batch), features_of(batch));
    counts[0] += logits.argmax(1).eq(labels_of(batch)).sum().item<int64_t>();
    counts[1] += static_cast<int64_t>(batch.seeds.size());
  }
  ctx.collectives().all_reduce_sum(counts, 2);
  model->train();
  return counts[1] == 0 ? 0.0 : static_cast<double>(counts[0]) / counts[1];
}

}  // namespace

int run_sage_training(const SageTrainOptions& o) {
  if (o.num_epochs < 1) fail("--num-epochs must be at least 1 (got {})", o.num_epochs);
  if (o.num_layers < 1) fail("--num-layers must be at least 1 (got {})", o.num_layers);
  if (o.log_every < 1 || o.eval_every < 1) fail("--log-every and --eval-every must be at least 1");
  const std::vector<int64_t> fanouts = layer_fanouts(o.fan_out, o.num_layers, "--fan-out");
  const std::vector<int64_t> eval_fanouts = layer_fanouts(o.eval_fan_out, o.num_layers, "--eval-fan-out");

  dist::InitOptions init;
  init.standalone = o.standalone;
  init.part_config = o.part_config;
  init.num_threads = o.num_threads;
  auto ctx = dist::initialize(init);
  if (!o.graph_name.empty() && o.graph_name != ctx->config().graph_name)
    fail("--graph-name {} does not match the partitioned graph '{}' in {}", o.graph_name, ctx->config().graph_name,
         o.part_config);
  dist::DistGraph g(*ctx);
  if (g.ntypes().size() != 1)
    fail("{} has {} node types: GraphSAGE here is for homogeneous graphs (use tessera train rgcn)", o.part_config,
         g.ntypes().size());
  const std::string& ntype = g.ntypes()[0];
  const int num_samplers = o.num_samplers >= 0 ? o.num_samplers : ctx->env().num_samplers;
  const bool logger = ctx->rank() == 0;
  const std::string out_dir = o.out_dir.empty() ? "sage-" + ctx->config().graph_name : o.out_dir;
  if (logger) fs::create_directories(out_dir);
  RunLog log(out_dir + "/metrics.jsonl", logger);

  const dist::DistTensor feat = g.ndata("feat");
  if (feat.spec().dtype != DType::kFloat32 || feat.spec().row_shape.size() != 1)
    fail("node data 'feat' must be float32 vectors (found {} of shape {})", dtype_name(feat.spec().dtype),
         feat.spec().row_elems());
  nn::SageOptions mo;
  mo.in_feats = feat.spec().row_elems();
  mo.hidden = o.num_hidden;
  mo.num_classes = count_classes(*ctx, store::node_tensor_name(ntype, "label"));
  mo.num_layers = o.num_layers;
  mo.dropout = o.dropout;
  mo.aggregator = o.aggregator;
  nn::validate(mo);

  const std::vector<int64_t> train_ids = dist::node_split(*ctx, g.ndata("train_mask"), true);
  const std::vector<int64_t> val_ids = dist::node_split(*ctx, g.ndata("val_mask"), true);
  const std::vector<int64_t> test_ids = dist::node_split(*ctx, g.ndata("test_mask"), true);

  sampling::SamplerOptions so;
  so.fanouts = fanouts;
  so.replace = o.replace;
  const sampling::DistNeighborSampler sampler(*ctx, so);
  sampling::SamplerOptions eval_so = so;
  eval_so.fanouts = eval_fanouts;
  const sampling::DistNeighborSampler eval_sampler(*ctx, eval_so);

  sampling::LoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.num_samplers = num_samplers;
  lo.seed = o.seed;
  sampling::DistDataLoader loader(*ctx, sampler, train_ids, lo);
  // Every trainer runs the same number of steps: the all-reduce of a step
  // needs them all.
  int64_t total_train = 0;
  const int64_t steps = common_steps(*ctx, loader.batches_per_epoch(), static_cast<int64_t>(train_ids.size()),
                                     o.max_batches, &total_train);
  loader.limit_batches(steps);

  torch::manual_seed(o.seed);
  nn::Sage model(mo);
  broadcast_parameters(*model, ctx->collectives());
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

  log.line(fmt::format("{}: {} trainers, {} training nodes ({} here), {} steps per epoch of {} seeds, fan-out {}, "
                       "{} sampler threads, model {} -> {} x{} -> {} classes",
                       ctx->config().graph_name, ctx->world_size(), total_train, train_ids.size(), steps, o.batch_size, o.fan_out, num_samplers, mo.in_feats, mo.hidden,
                       mo.num_layers, mo.num_classes));

  double val_acc = -1, test_acc = -1, total_epoch_s = 0, last_loss = 0, last_train_acc = 0;
  PhaseTimes all;
  for (int epoch = 0; epoch < o.num_epochs; ++epoch) {
    Timer epoch_timer;
    PhaseTimes ep, window;
    loader.start_epoch(epoch);
    model->train();
    sampling::MiniBatch batch;
    for (int64_t step = 0;; ++step) {
      Timer t;
      if (!loader.next(&batch)) break;
      const double wait = t.seconds();
      t.reset();
      const std::vector<nn::BlockTensors> blocks = block_tensors(batch);
      const StepResult r = supervised_step(
          *model, optimizer, ctx->collectives(), [&] { return model->forward(blocks, features_of(batch)); },
          labels_of(batch));
      ep.add_step(batch, wait, r);
      window.add_step(batch, wait, r);
      log.progress(epoch, step + 1, steps);
      if ((step + 1) % o.log_every == 0) {
        const double secs = window.wait + window.compute + window.allreduce;
        log.line(fmt::format("Epoch {:05d} | Step {:05d} | Loss {:.4f} | Train Acc {:.4f} | Speed (seeds/s) {:.1f} | "
                             "Edges/s {:.3g} | {}",
                             epoch, step + 1, window.loss / window.steps,
                             static_cast<double>(window.correct) / window.seeds, window.seeds / secs,
                             window.edges / secs, window.split()));
        window = PhaseTimes{};
      }
    }
    const double epoch_s = epoch_timer.seconds();
    total_epoch_s += epoch_s;
    last_loss = ep.loss / std::max<int64_t>(1, ep.steps);
    last_train_acc = static_cast<double>(ep.correct) / std::max<int64_t>(1, ep.seeds);
    all.add(ep);
    json record = {{"epoch", epoch}, {"loss", last_loss}, {"train_acc", last_train_acc}, {"epoch_time_s", epoch_s},
                   {"steps", ep.steps}, {"seeds_per_s", ep.seeds / epoch_s}, {"edges_per_s", ep.edges / epoch_s}};
    record.update(ep.times());
    std::string eval_text;
    if ((epoch + 1) % o.eval_every == 0 || epoch + 1 == o.num_epochs) {
      val_acc = evaluate(*ctx, model, eval_sampler, val_ids, o, num_samplers);
      test_acc = evaluate(*ctx, model, eval_sampler, test_ids, o, num_samplers);
      record["val_acc"] = val_acc;
      record["test_acc"] = test_acc;
      eval_text = fmt::format(" | Val Acc {:.4f} | Test Acc {:.4f}", val_acc, test_acc);
    }
    log.metrics(record);
    log.line(fmt::format("Epoch {:05d} | Time {:.3f}s | Loss {:.4f} | Train Acc {:.4f} | {:.1f} seeds/s | {:.1f} "
                         "mini-batches/s | {}{}",
                         epoch, epoch_s, last_loss, last_train_acc, ep.seeds / epoch_s, ep.steps / epoch_s,
                         ep.split(), eval_text));
  }

  if (logger) nn::save_sage(model, mo, out_dir + "/model");
  json end_record = final_record({val_acc, test_acc, last_train_acc, last_loss, o.num_epochs, steps, ctx->world_size(),
                                   total_epoch_s, out_dir + "/model"},
                                  all);
  end_record["mini_batches_per_s"] = all.steps / total_epoch_s;
  end_record["edges_per_s"] = all.edges / total_epoch_s;
  ctx->finalize();
  log.final_metrics(end_record);
  return 0;
}

}  // namespace tessera::train
