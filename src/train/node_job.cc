#include "tessera/train/node_job.h"

#include <algorithm>

#include <fmt/format.h>

#include "distributed/id_chunks.h"
#include "tessera/base/error.h"
#include "tessera/train/epoch_loop.h"

namespace tessera::train {

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

distributed::DistTensor input_features(const distributed::DistGraph& g, const std::string& name) {
  const distributed::DistTensor feat = g.ndata(name);
  if (feat.spec().dtype != DType::kFloat32 || feat.spec().row_shape.size() != 1)
    fail("node data '{}' must be float32 vectors (found {} rows of {} values)", name, dtype_name(feat.spec().dtype),
         feat.spec().row_elems());
  return feat;
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

}  // namespace tessera::train
