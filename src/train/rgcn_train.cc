#include "tessera/train/rgcn_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "../nn/rgcn.h"
#include "tessera/dist/context.h"
#include "tessera/dist/dist_embedding.h"
#include "tessera/dist/dist_graph.h"
#include "tessera/dist/node_split.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/train/run_log.h"
#include "tessera/util/error.h"
#include "tessera/util/timer.h"
#include "train_common.h"

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

// One batch in the model's terms. Embedding rows are leaves whose gradient
// goes to the sparse optimizer.
struct BatchTensors {
  std::vector<nn::RelBlock> blocks;
  std::vector<nn::TypedRows> inputs;
  std::vector<int> embedded;  // indices into inputs of embedding rows
};

BatchTensors batch_tensors(const sampling::MiniBatch& batch, const PartitionConfig& config,
                           const std::vector<bool>& is_embedded, bool train) {
  BatchTensors t;
  const int64_t num_rels = static_cast<int64_t>(config.etypes.size());
  for (const sampling::Block& b : batch.blocks)
    t.blocks.push_back(nn::rel_block(b.indptr, b.indices, b.etypes, b.num_src(), num_rels));
  for (const sampling::TypedInputs& g : batch.inputs) {
    nn::TypedRows rows;
    rows.ntype = config.ntypes[g.ntype];
    rows.positions = torch::from_blob(const_cast<int64_t*>(g.positions.data()),
                                      {static_cast<int64_t>(g.positions.size())}, torch::kInt64);
    rows.rows = rows_of(g.rows);
    if (is_embedded[g.ntype] && train) {
      rows.rows.requires_grad_(true);
      t.embedded.push_back(static_cast<int>(t.inputs.size()));
    }
    t.inputs.push_back(std::move(rows));
  }
  return t;
}

}  // namespace

int run_rgcn_training(const RgcnTrainOptions& o) {
  if (o.num_epochs < 1) fail("--n-epochs must be at least 1 (got {})", o.num_epochs);
  if (o.num_layers < 1) fail("--n-layers must be at least 1 (got {})", o.num_layers);
  if (o.num_hidden < 1) fail("--n-hidden must be at least 1 (got {})", o.num_hidden);
  if (o.log_every < 1 || o.eval_every < 1) fail("--log-every and --eval-every must be at least 1");
  if (o.fanout_mode != "total" && o.fanout_mode != "per-etype")
    fail("--fanout-mode '{}': expected total or per-etype", o.fanout_mode);
  if (o.sparse_optimizer != "adam" && o.sparse_optimizer != "adagrad")
    fail("--sparse-optimizer '{}': expected adam or adagrad", o.sparse_optimizer);
  const std::vector<int64_t> fanouts = layer_fanouts(o.fanout, o.num_layers, "--fanout");
  const std::vector<int64_t> eval_fanouts =
      layer_fanouts(o.validation_fanout.empty() ? o.fanout : o.validation_fanout, o.num_layers, "--validation-fanout");

  dist::InitOptions init;
  init.standalone = o.standalone;
  init.part_config = o.part_config;
  init.num_threads = o.num_threads;
  auto ctx = dist::initialize(init);
  const PartitionConfig& config = ctx->config();
  if (!o.graph_name.empty() && o.graph_name != config.graph_name)
    fail("--graph-name {} does not match the partitioned graph '{}'", o.graph_name, config.graph_name);
  dist::DistGraph g(*ctx);
  const std::string category = predict_category(config, o.predict_category);
  const int category_type = static_cast<int>(std::find(config.ntypes.begin(), config.ntypes.end(), category) -
                                             config.ntypes.begin());
  const int num_samplers = o.num_samplers >= 0 ? o.num_samplers : ctx->env().num_samplers;
  const bool logger = ctx->rank() == 0;
  const std::string out_dir = o.out_dir.empty() ? "rgcn-" + config.graph_name : o.out_dir;
  if (logger) fs::create_directories(out_dir);
  RunLog log(out_dir + "/metrics.jsonl", logger);

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
  std::vector<std::unique_ptr<dist::DistEmbedding>> embeddings(config.ntypes.size());
  std::vector<const dist::DistEmbedding*> embedding_list;
  std::vector<bool> is_embedded(config.ntypes.size(), false);
  sampling::LoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.num_samplers = num_samplers;
  lo.seed = o.seed;
  lo.seed_ntype = category;
  for (size_t t = 0; t < config.ntypes.size(); ++t) {
    const std::string& ntype = config.ntypes[t];
    if (mo.feature_dims.count(ntype)) {
      lo.typed_inputs[ntype] = store::node_tensor_name(ntype, "feat");
      continue;
    }
    embeddings[t] = std::make_unique<dist::DistEmbedding>(
        *ctx, "rgcn-emb-" + ntype, o.num_hidden, ctx->book().node_policy(static_cast<int>(t)),
        store::Initializer{"uniform", -1, 1, o.seed * 1000 + t});
    embedding_list.push_back(embeddings[t].get());
    is_embedded[t] = true;
    lo.typed_inputs[ntype] = embeddings[t]->name();
  }
  std::unique_ptr<dist::SparseOptimizer> sparse_optimizer;
  if (!embedding_list.empty()) {
    if (o.sparse_optimizer == "adam") sparse_optimizer = std::make_unique<dist::SparseAdam>(*ctx, embedding_list, o.sparse_lr);
    else sparse_optimizer = std::make_unique<dist::SparseAdagrad>(*ctx, embedding_list, o.sparse_lr);
  }

  // Seeds: this trainer's share of the category's split, as homogeneous IDs.
  auto split_of = [&](const char* mask) {
    std::vector<int64_t> ids;
    if (!config.node_feat_schema.at(category).count(mask)) return ids;
    ids = dist::node_split(*ctx, g.ndata(mask, category), true);
    for (int64_t& id : ids) id = ctx->book().homogeneous_node(category_type, id);
    return ids;
  };
  const std::vector<int64_t> train_ids = split_of("train_mask");
  const std::vector<int64_t> val_ids = split_of("val_mask");
  const std::vector<int64_t> test_ids = split_of("test_mask");

  sampling::SamplerOptions so;
  so.fanouts = fanouts;
  so.per_etype = o.fanout_mode == "per-etype";
  const sampling::DistNeighborSampler sampler(*ctx, so);
  sampling::SamplerOptions eval_so = so;
  eval_so.fanouts = eval_fanouts;
  const sampling::DistNeighborSampler eval_sampler(*ctx, eval_so);

  sampling::DistDataLoader loader(*ctx, sampler, train_ids, lo);
  int64_t total_train = 0;
  const int64_t steps =
      common_steps(*ctx, loader.batches_per_epoch(), static_cast<int64_t>(train_ids.size()), o.max_batches, &total_train);
  loader.limit_batches(steps);

  torch::manual_seed(o.seed);
  nn::Rgcn model(mo);
  broadcast_parameters(*model, ctx->collectives());
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.l2norm));

  // Accuracy over `ids` (this trainer's share), summed over all trainers;
  // -1 when the split is empty everywhere.
  auto evaluate = [&](const std::vector<int64_t>& ids) {
    if (sparse_optimizer) sparse_optimizer->flush();  // evaluate the embeddings as trained
    torch::NoGradGuard no_grad;
    model->eval();
    sampling::LoaderOptions elo = lo;
    elo.batch_size = o.eval_batch_size;
    elo.shuffle = false;
    sampling::DistDataLoader eval_loader(*ctx, eval_sampler, ids, elo);
    eval_loader.start_epoch(0);
    int64_t counts[2] = {0, 0};  // correct, total
    sampling::MiniBatch batch;
    while (eval_loader.next(&batch)) {
      const BatchTensors t = batch_tensors(batch, config, is_embedded, false);
      const torch::Tensor logits = model->forward(t.blocks, t.inputs);
      counts[0] += logits.argmax(1).eq(labels_of(batch)).sum().item<int64_t>();
      counts[1] += static_cast<int64_t>(batch.seeds.size());
    }
    ctx->collectives().all_reduce_sum(counts, 2);
    model->train();
    return counts[1] == 0 ? -1.0 : static_cast<double>(counts[0]) / counts[1];
  };

  log.line(fmt::format("{}: {} trainers, {} training {} nodes ({} here), {} steps per epoch of {} seeds, fanout {} "
                       "({}), {} sampler threads; {} relations, {} bases, {} hidden x{}, {} classes; embeddings for "
                       "{} of {} node types",
                       config.graph_name, ctx->world_size(), total_train, category, train_ids.size(), steps,
                       o.batch_size, o.fanout, o.fanout_mode, num_samplers, mo.num_rels, mo.num_bases, mo.hidden,
                       mo.num_layers, mo.num_classes, embedding_list.size(), config.ntypes.size()));

  double val_acc = -1, test_acc = -1, total_epoch_s = 0, last_loss = 0, last_train_acc = 0, busy_s = 0;
  PhaseTimes all;
  for (int epoch = 0; epoch < o.num_epochs; ++epoch) {
    Timer epoch_timer;
    const HostCpu cpu_at_start = host_cpu();
    PhaseTimes ep, window;
    loader.start_epoch(epoch);
    model->train();
    sampling::MiniBatch batch;
    for (int64_t step = 0;; ++step) {
      Timer t;
      if (!loader.next(&batch)) break;
      const double wait = t.seconds();
      t.reset();
      BatchTensors bt = batch_tensors(batch, config, is_embedded, true);
      const double prepare = t.seconds();
      StepResult r = supervised_step(
          *model, optimizer, ctx->collectives(), [&] { return model->forward(bt.blocks, bt.inputs); },
          labels_of(batch));
      r.compute_s += prepare;
      t.reset();
      // Embedding gradients go out without waiting; the servers apply them
      // while the next batch computes, and the next step first waits for
      // these acknowledgements, so at most one step is in flight.
      if (sparse_optimizer) sparse_optimizer->flush();
      for (const int k : bt.embedded) {
        const sampling::TypedInputs& group = batch.inputs[k];
        const torch::Tensor grad = bt.inputs[k].rows.grad().contiguous();
        sparse_optimizer->step_async(*embeddings[group.ntype], group.ids.data(),
                                     static_cast<int64_t>(group.ids.size()), grad.data_ptr<float>());
      }
      const double sparse = t.seconds();
      ep.add_step(batch, wait, r, sparse);
      window.add_step(batch, wait, r, sparse);
      log.progress(epoch, step + 1, steps);
      if ((step + 1) % o.log_every == 0) {
        const double secs = window.wait + window.compute + window.allreduce + window.sparse;
        log.line(fmt::format("Epoch {:05d} | Step {:05d} | Loss {:.4f} | Train Acc {:.4f} | Speed (seeds/s) {:.1f} | {}",
                             epoch, step + 1, window.loss / window.steps,
                             static_cast<double>(window.correct) / window.seeds, window.seeds / secs, window.split()));
        window = PhaseTimes{};
      }
    }
    const double epoch_s = epoch_timer.seconds();
    const double cpu_busy = host_cpu().busy_since(cpu_at_start);
    total_epoch_s += epoch_s;
    busy_s += cpu_busy * epoch_s;
    last_loss = ep.loss / std::max<int64_t>(1, ep.steps);
    last_train_acc = static_cast<double>(ep.correct) / std::max<int64_t>(1, ep.seeds);
    all.add(ep);
    json record = {{"epoch", epoch}, {"loss", last_loss}, {"train_acc", last_train_acc}, {"epoch_time_s", epoch_s},
                   {"steps", ep.steps}, {"seeds_per_s", ep.seeds / epoch_s}, {"wait_fraction", ep.wait / epoch_s},
                   {"host_cpu_busy", cpu_busy}};
    record.update(ep.times());
    std::string eval_text;
    if ((epoch + 1) % o.eval_every == 0 || epoch + 1 == o.num_epochs) {
      val_acc = evaluate(val_ids);
      test_acc = evaluate(test_ids);
      record["val_acc"] = val_acc;
      record["test_acc"] = test_acc;
      eval_text = fmt::format(" | Val Acc {:.4f} | Test Acc {:.4f}", val_acc, test_acc);
    }
    log.metrics(record);
    log.line(fmt::format("Epoch {:05d} | Time {:.3f}s | Loss {:.4f} | Train Acc {:.4f} | {:.1f} seeds/s | {} | "
                         "host CPU {:.0f}% busy{}",
                         epoch, epoch_s, last_loss, last_train_acc, ep.seeds / epoch_s, ep.split(), 100 * cpu_busy,
                         eval_text));
  }

  if (sparse_optimizer) sparse_optimizer->flush();
  ctx->collectives().barrier();  // every trainer's last updates have landed before trainer 0 saves
  if (logger) {
    nn::save_rgcn(model, out_dir + "/model");
    fs::create_directories(out_dir + "/embeddings");
    for (size_t t = 0; t < embeddings.size(); ++t)
      if (embeddings[t]) embeddings[t]->save(out_dir + "/embeddings/" + config.ntypes[t] + ".npy");
  }
  json end_record = final_record({val_acc, test_acc, last_train_acc, last_loss, o.num_epochs, steps, ctx->world_size(),
                                   total_epoch_s, out_dir + "/model"},
                                  all);
  end_record["wait_fraction"] = all.wait / total_epoch_s;
  end_record["host_cpu_busy"] = busy_s / total_epoch_s;
  ctx->finalize();
  log.final_metrics(end_record);
  return 0;
}

}  // namespace tessera::train
