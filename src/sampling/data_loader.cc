#include "tessera/sampling/data_loader.h"

#include <omp.h>

#include <algorithm>
#include <map>
#include <utility>

#include "base/array_pool.h"
#include "net/transport.h"
#include "tessera/distributed/dist_tensor.h"
#include "distributed/kv_client.h"
#include "sampling/input_aggregation.h"
#include "tessera/base/error.h"
#include "tessera/base/threads.h"
#include "tessera/base/random.h"
#include "tessera/base/timer.h"

namespace tessera::sampling {
namespace {

// Input rows are aggregated as float32 vectors only (aggregate_inputs, set_input_aggregation).
void check_aggregatable(const std::string& feature, const store::TensorSpec& f) {
  if (f.dtype != DType::kFloat32 || f.row_shape.size() != 1)
    fail("aggregating input rows needs float32 vectors, but '{}' holds {} of shape [{}]", feature,
         dtype_name(f.dtype), f.row_elems());
}

}  // namespace

DistDataLoader::DistDataLoader(distributed::Context& ctx, const DistNeighborSampler& sampler, std::vector<int64_t> seeds,
                               LoaderOptions options)
    : ctx_(&ctx), sampler_(&sampler), seeds_(std::move(seeds)), options_(std::move(options)) {
  if (options_.batch_size < 1) fail("--batch-size must be at least 1 (got {})", options_.batch_size);
  if (options_.num_samplers < 0) fail("--num-samplers must be 0 or more (got {})", options_.num_samplers);
  const auto& ntypes = ctx.config().ntypes;
  seed_ntype_ = options_.seed_ntype.empty() ? ntypes[0] : options_.seed_ntype;
  if (std::find(ntypes.begin(), ntypes.end(), seed_ntype_) == ntypes.end())
    fail("the graph has no node type '{}'", seed_ntype_);
  // A trainer that names typed inputs up front reads every type's rows.
  if (!options_.typed_inputs.empty())
    for (const std::string& ntype : ntypes)
      if (options_.typed_inputs.count(ntype) == 0) fail("node type '{}' has no input tensor", ntype);
  fetch_ = plan_fetch(options_.typed_inputs.empty() ? options_.feature : "", options_.label, options_.typed_inputs);
  for (const auto& cache : options_.feature_caches) add_feature_cache(cache);
  if (options_.aggregate_inputs) {
    if (!options_.typed_inputs.empty() || options_.pyg_layout)
      fail("a loader that aggregates its input rows fetches one feature tensor in blocks (no typed inputs, no PyG "
           "layout)");
    if (!fetch_.feature.empty()) check_aggregatable(fetch_.feature, fetch_.feature_spec);
  }
  const int64_t n = static_cast<int64_t>(seeds_.size());
  num_batches_ = options_.drop_last ? n / options_.batch_size : (n + options_.batch_size - 1) / options_.batch_size;
  if (options_.prefetch <= 0) options_.prefetch = 2 * std::max(1, options_.num_samplers);
  // Every batch in flight holds one buffer per input tensor: those ready,
  // one being filled per sampler, and the trainer's two (next() fills its
  // batch before the previous one's buffers go). A smaller cap would free
  // a buffer at every peak and fault a fresh one in at the next.
  const size_t in_flight = static_cast<size_t>(options_.prefetch + 2 + std::max(1, options_.num_samplers));
  // Aggregating loaders hold two buffers a batch (rows and their aggregation); set_input_aggregation may make
  // any loader one. The cap keeps idle buffers only: a loader that never aggregates never fills it.
  input_rows_ = std::make_shared<ArrayPool>(in_flight * ntypes.size() * 2);
  workers_.resize(std::max(1, options_.num_samplers));
  for (size_t w = 0; w < workers_.size(); ++w) {
    // The caller's thread can use the context's own connection.
    workers_[w].client = options_.num_samplers > 0 ? ctx.connect() : nullptr;
    workers_[w].builder = std::make_unique<BlockBuilder>(ctx.config().num_nodes);
  }
}

DistDataLoader::~DistDataLoader() { stop_workers(); }

DistDataLoader::FetchPlan DistDataLoader::plan_fetch(const std::string& feature, const std::string& label,
                                                     const std::map<std::string, std::string>& typed_inputs) const {
  FetchPlan plan;
  plan.feature = feature;
  plan.label = label;
  const auto& ntypes = ctx_->config().ntypes;
  // Node data is indexed by type-local IDs; with one node type those are
  // the homogeneous IDs the sampler produces.
  if (!feature.empty()) {
    if (!typed_inputs.empty()) fail("a loader with typed inputs fetches no single feature tensor");
    // With several node types the inputs' rows live in one tensor per type:
    // name them in typed_inputs instead.
    if (ntypes.size() != 1)
      fail("the graph has {} node types, so node data '{}' of the input nodes is one tensor per type: name every "
           "type's input tensor (typed inputs) or fetch no feature",
           ntypes.size(), feature);
    plan.feature_spec = distributed::DistTensor::open(*ctx_, store::node_tensor_name(ntypes[0], feature)).spec();
  }
  if (!typed_inputs.empty()) {
    plan.input_specs.resize(ntypes.size());
    for (const auto& [ntype, tensor] : typed_inputs) {
      const auto it = std::find(ntypes.begin(), ntypes.end(), ntype);
      if (it == ntypes.end()) fail("typed inputs name node type '{}', which the graph does not have", ntype);
      const int t = static_cast<int>(it - ntypes.begin());
      plan.input_specs[t] = distributed::DistTensor::open(*ctx_, tensor).spec();
      if (plan.input_specs[t].policy != ctx_->book().node_policy(t))
        fail("input tensor '{}' of node type '{}' is sharded by {}, not by that node type", tensor, ntype,
             plan.input_specs[t].policy);
    }
  }
  if (!label.empty())
    plan.label_spec = distributed::DistTensor::open(*ctx_, store::node_tensor_name(seed_ntype_, label)).spec();
  return plan;
}

void DistDataLoader::install(FetchPlan plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  plan.caches = std::move(fetch_.caches);
  if (plan.feature == fetch_.feature) plan.aggregate = fetch_.aggregate;  // the same rows: the same reduction
  fetch_ = std::move(plan);
}

void DistDataLoader::set_fetch(const std::string& feature, const std::string& label) {
  install(plan_fetch(feature, label, {}));
}

void DistDataLoader::set_input_aggregation(std::optional<nn::CsrReduce> reduce) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reduce) {
    if (fetch_.feature.empty() || options_.pyg_layout || options_.aggregate_inputs)
      fail("set_input_aggregation: the loader must fetch one feature tensor into blocks (set_fetch first; no PyG "
           "layout, no aggregate_inputs option)");
    check_aggregatable(fetch_.feature, fetch_.feature_spec);
  }
  fetch_.aggregate = reduce;
}

void DistDataLoader::set_typed_fetch(const std::map<std::string, std::string>& inputs, const std::string& label) {
  install(plan_fetch("", label, inputs));
}

void DistDataLoader::add_feature_cache(std::shared_ptr<const distributed::RemoteRowCache> cache) {
  if (!cache) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& caches = fetch_.caches;
  caches.erase(std::remove_if(caches.begin(), caches.end(),
                              [&](const auto& c) { return c->spec().name == cache->spec().name; }),
               caches.end());
  caches.push_back(std::move(cache));
}

const distributed::RemoteRowCache* DistDataLoader::FetchPlan::cache_of(const store::TensorSpec& spec) const {
  for (const auto& cache : caches)
    if (cache->spec().name == spec.name) return cache.get();
  return nullptr;
}

void DistDataLoader::limit_batches(int64_t count) {
  if (count < 0) fail("internal: negative batch limit");
  num_batches_ = std::min(num_batches_, count);
}

void DistDataLoader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void DistDataLoader::stop() {
  stop_workers();
  next_deliver_ = num_batches_;
}

void DistDataLoader::start_epoch(int epoch) {
  stop_workers();
  epoch_ = epoch;
  order_ = seeds_;
  if (options_.shuffle) {
    Rng rng(options_.seed, (static_cast<uint64_t>(epoch) << 20) + ctx_->rank());
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
  }
  ready_.clear();
  next_claim_ = next_deliver_ = 0;
  stopping_ = false;
  error_ = nullptr;
  for (int w = 0; w < options_.num_samplers; ++w) threads_.emplace_back([this, w] { run_worker(w); });
}

void DistDataLoader::produce(Worker& worker, int worker_index, int64_t batch_index, const FetchPlan& fetch,
                             MiniBatch* batch) {
  const int64_t begin = batch_index * options_.batch_size;
  const int64_t end = std::min<int64_t>(begin + options_.batch_size, static_cast<int64_t>(order_.size()));
  batch->index = batch_index;
  net::Client* client = worker.client ? worker.client.get() : (ctx_->standalone() ? nullptr : &ctx_->client());
  const Channel channel{client, worker_index};
  const uint64_t key = splitmix64(options_.seed ^ splitmix64((static_cast<uint64_t>(epoch_) << 32) ^
                                                            (static_cast<uint64_t>(ctx_->rank()) << 48) ^
                                                            static_cast<uint64_t>(batch_index)));
  Timer timer;
  ThreadCpuTimer cpu;
  EdgeExclusion exclusion;
  if (options_.edges) {
    plan_edge_batch(*ctx_, client, worker_index, *options_.edges, {order_.begin() + begin, order_.begin() + end}, key,
                    &batch->edges, &batch->seeds, &exclusion);
  } else {
    batch->seeds.assign(order_.begin() + begin, order_.begin() + end);
    std::sort(batch->seeds.begin(), batch->seeds.end());  // partition-major: groups requests, helps caches
  }
  batch->blocks = sampler_->sample_blocks(batch->seeds, key, *worker.builder, channel, &exclusion);
  if (options_.pyg_layout) {
    batch->pyg = pyg_layout(batch->blocks);
    batch->blocks.clear();
  }
  batch->sample_s = timer.seconds();
  batch->sample_cpu_s = cpu.seconds();
  timer.reset();
  cpu.reset();
  const std::vector<int64_t>& inputs = options_.pyg_layout ? batch->pyg.nodes : batch->blocks.front().src_nodes;
  if (!fetch.input_specs.empty()) {
    fetch_typed_inputs(client, worker_index, fetch, inputs, batch);
  } else if (!fetch.feature.empty() && (options_.aggregate_inputs || fetch.aggregate)) {
    aggregate_inputs(client, worker_index, fetch, batch);
  } else if (!fetch.feature.empty()) {
    batch->features =
        pull_inputs(client, worker_index, fetch, fetch.feature_spec, inputs.data(), static_cast<int64_t>(inputs.size()));
  }
  if (!fetch.label.empty()) {
    std::vector<int64_t> label_ids(batch->seeds.size());
    for (size_t i = 0; i < label_ids.size(); ++i) label_ids[i] = ctx_->book().typed_node(batch->seeds[i]).id;
    batch->labels = distributed::pull_rows(*ctx_, client, worker_index, fetch.label_spec, label_ids.data(),
                                    static_cast<int64_t>(label_ids.size()));
  }
  batch->fetch_s = timer.seconds();
  batch->fetch_cpu_s = cpu.seconds();
}

void DistDataLoader::fetch_typed_inputs(net::Client* client, int worker_index, const FetchPlan& fetch,
                                        const std::vector<int64_t>& inputs, MiniBatch* batch) const {
  std::vector<TypedInputs> by_type(fetch.input_specs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PartitionBook::TypedNode node = ctx_->book().typed_node(inputs[i]);
    if (node.ntype < 0) fail("sampling produced node {}, which is not in the graph", inputs[i]);
    if (fetch.input_specs[node.ntype].name.empty()) continue;
    by_type[node.ntype].positions.push_back(static_cast<int64_t>(i));
    by_type[node.ntype].ids.push_back(node.id);
  }
  batch->inputs.clear();
  for (size_t t = 0; t < by_type.size(); ++t) {
    TypedInputs& group = by_type[t];
    if (group.ids.empty()) continue;
    group.ntype = static_cast<int>(t);
    group.rows = pull_inputs(client, worker_index, fetch, fetch.input_specs[t], group.ids.data(),
                             static_cast<int64_t>(group.ids.size()));
    batch->inputs.push_back(std::move(group));
  }
}

Array DistDataLoader::pull_inputs(net::Client* client, int worker_index, const FetchPlan& fetch,
                                  const store::TensorSpec& spec, const int64_t* ids, int64_t count) const {
  const distributed::RemoteRowCache* cache = fetch.cache_of(spec);
  const bool cached = cache != nullptr;
  // A machine without a partition takes each partition's rows as its reply
  // frame when they all come from one: there is no copy to save.
  if (!cached && !ctx_->has_local_part()) return distributed::pull_rows(*ctx_, client, worker_index, spec, ids, count);
  Array rows = input_rows_->take(spec.dtype, spec.shape(count));
  if (cached) cache->pull_into(*ctx_, client, worker_index, ids, count, rows.mutable_raw());
  else distributed::pull_rows_into(*ctx_, client, worker_index, spec, ids, count, rows.mutable_raw(), nullptr);
  return rows;
}

void DistDataLoader::aggregate_inputs(net::Client* client, int worker_index, const FetchPlan& fetch,
                                      MiniBatch* batch) const {
  const Block& first = batch->blocks.front();
  const store::TensorSpec& spec = fetch.feature_spec;
  const int64_t count = first.num_src();
  std::vector<const char*> rows(static_cast<size_t>(count));
  Array pulled;  // the remote rows no cache holds
  const distributed::RemoteRowCache* cache = fetch.cache_of(spec);
  if (cache != nullptr)
    cache->locate(*ctx_, client, worker_index, first.src_nodes.data(), count, rows.data(), &pulled);
  else
    distributed::locate_rows(*ctx_, client, worker_index, spec, first.src_nodes.data(), count, rows.data(), &pulled);
  // The native trainer's layer needs the destinations' rows (none for gcn); a script reads every source's.
  const bool all_sources = !options_.aggregate_inputs;
  const nn::CsrReduce reduce = all_sources ? *fetch.aggregate : *options_.aggregate_inputs;
  const int64_t copies = all_sources ? count : reduce == nn::CsrReduce::kGcnMean ? 0 : first.num_dst;
  batch->features = copies == 0 ? Array() : input_rows_->take(spec.dtype, spec.shape(copies));
  batch->aggregated = input_rows_->take(spec.dtype, spec.shape(first.num_dst));
  aggregate_located_rows(rows.data(), first, reduce, spec.row_elems(),
                         copies == 0 ? nullptr : static_cast<float*>(batch->features.mutable_raw()), copies,
                         static_cast<float*>(batch->aggregated.mutable_raw()));
}

void DistDataLoader::run_worker(int worker_index) {
  // Sampler threads run beside the trainer's intra-op threads: each keeps to
  // one core's worth of work instead of starting OpenMP teams of its own.
  omp_set_num_threads(1);
  try {
    lower_sampler_priority();
    for (;;) {
      int64_t index;
      FetchPlan fetch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        space_cv_.wait(lock, [&] {
          return stopping_ || next_claim_ >= num_batches_ || next_claim_ < next_deliver_ + options_.prefetch;
        });
        if (stopping_ || next_claim_ >= num_batches_) return;
        index = next_claim_++;
        fetch = fetch_;
      }
      MiniBatch batch;
      produce(workers_[worker_index], worker_index, index, fetch, &batch);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.emplace(index, std::move(batch));
      }
      ready_cv_.notify_all();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      stopping_ = true;
    }
    ready_cv_.notify_all();
    space_cv_.notify_all();
  }
}

bool DistDataLoader::next(MiniBatch* batch) {
  if (next_deliver_ >= num_batches_) return false;
  if (options_.num_samplers == 0) {
    produce(workers_[0], 0, next_deliver_++, fetch_, batch);
    return true;
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_cv_.wait(lock, [&] { return error_ || ready_.count(next_deliver_) > 0; });
    if (error_) std::rethrow_exception(error_);
    auto it = ready_.find(next_deliver_);
    *batch = std::move(it->second);
    ready_.erase(it);
    ++next_deliver_;
  }
  space_cv_.notify_all();
  return true;
}

}  // namespace tessera::sampling
