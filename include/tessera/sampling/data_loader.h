// DistDataLoader: mini-batches of seeds, sampled and fetched ahead of the trainer. Sampler threads
// (--num-samplers) each hold their own connection to the servers and their own block builder; they claim batch
// numbers in turn, sample the blocks, pull the input features and the seeds' labels, and park the batch until
// the trainer takes it. The trainer receives the batches in order, so a run does not depend on thread timing,
// and at most `prefetch` batches wait ahead (bounded memory). With no sampler threads, next() samples on the
// caller's thread through the Context's connection.
//
// The loader keeps pointers to the Context and the sampler, which must outlive it; a MiniBatch owns its data.
// Its methods belong to one thread (the Context's); its own sampler threads stop at start_epoch() and at
// destruction, which joins them. No call is collective. Errors are tessera::Error naming the flag or tensor
// (--batch-size, --num-samplers, a missing node type or input tensor); a sampler thread's error is rethrown by
// next().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/remote_row_cache.h"
#include "tessera/base/array.h"
#include "tessera/nn/csr_reduce.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/loader_options.h"
#include "tessera/sampling/mini_batch.h"
#include "tessera/store/tensor.h"

namespace tessera {
class ArrayPool;
}

namespace tessera::sampling {

class DistDataLoader {
 public:
  // `seeds`: this trainer's share of the seed nodes (node_split), or of the
  // edges with options.edges.
  DistDataLoader(distributed::Context& ctx, const DistNeighborSampler& sampler, std::vector<int64_t> seeds,
                 LoaderOptions options);
  ~DistDataLoader();
  DistDataLoader(const DistDataLoader&) = delete;
  DistDataLoader& operator=(const DistDataLoader&) = delete;

  // Stops the sampler threads and drops the epoch's remaining batches: next()
  // returns false until the next start_epoch(). For a process leaving its job
  // while a loop it broke out of still holds the loader.
  void stop();

  int64_t batches_per_epoch() const { return num_batches_; }
  int64_t num_seeds() const { return static_cast<int64_t>(seeds_.size()); }
  // Caps the batches of every epoch, so that all trainers run the same
  // number of steps and no all-reduce waits on a trainer that ran out.
  void limit_batches(int64_t count);

  // Changes which node data the samplers fetch with each batch (`feature`:
  // rows of the input nodes; `label`: rows of the seeds; "" for none), from
  // the next batch a sampler claims on. For callers that learn what the
  // trainer reads only once it reads it (the Python loader).
  void set_fetch(const std::string& feature, const std::string& label);
  // The same for a heterogeneous graph: `inputs` maps some node types to
  // the full name of their input tensor (as typed_inputs; a type left out
  // gets no rows), `label` is the seeds' node data or "".
  void set_typed_fetch(const std::map<std::string, std::string>& inputs, const std::string& label);
  // Besides the source rows the samplers fetch (set_fetch's feature), blocks[0]'s
  // `reduce` of them (MiniBatch::aggregated), summed as the rows are copied,
  // from the next batch a sampler claims on; nullopt stops it. For a first
  // layer that learns it can take the aggregation only when it first runs
  // (the Python SAGEConv), and whose script still reads every source row.
  // The feature must be float32 vectors.
  void set_input_aggregation(std::optional<nn::CsrReduce> reduce);
  // Rows of one fetched tensor kept in this process (as
  // LoaderOptions::feature_caches), from the next batch a sampler claims
  // on; it replaces the cache of the same tensor, if any.
  void add_feature_cache(std::shared_ptr<const distributed::RemoteRowCache> cache);

  // Shuffles (by seed and epoch) and starts the samplers on the epoch.
  void start_epoch(int epoch);
  // The epoch's next batch, in order; false once the epoch is done. A
  // sampler's error is rethrown here.
  bool next(MiniBatch* batch);

 private:
  struct Worker {
    std::unique_ptr<net::Client> client;
    std::unique_ptr<BlockBuilder> builder;
  };
  // What a batch fetches besides its blocks; samplers copy it when they claim
  // a batch, so set_fetch() may change it while they run.
  struct FetchPlan {
    std::string feature, label;
    store::TensorSpec feature_spec, label_spec;
    // Typed inputs: by node type, that type's input tensor (no name: the
    // type fetches no rows). Empty: no typed inputs.
    std::vector<store::TensorSpec> input_specs;
    distributed::RemoteRowCaches caches;
    // set_input_aggregation's reduction, kept with the source rows.
    std::optional<nn::CsrReduce> aggregate;
    // The cache of tensor `spec`, or null.
    const distributed::RemoteRowCache* cache_of(const store::TensorSpec& spec) const;
  };
  FetchPlan plan_fetch(const std::string& feature, const std::string& label,
                       const std::map<std::string, std::string>& typed_inputs) const;
  // Makes `plan` what samplers fetch from their next claim on, keeping the caches.
  void install(FetchPlan plan);
  void produce(Worker& worker, int worker_index, int64_t batch_index, const FetchPlan& fetch, MiniBatch* batch);
  void run_worker(int worker_index);
  void stop_workers();

  distributed::Context* ctx_;
  const DistNeighborSampler* sampler_;
  std::vector<int64_t> seeds_, order_;
  LoaderOptions options_;
  // The rows of `inputs` (blocks[0]'s sources, or PyG's nodes) by node type.
  void fetch_typed_inputs(net::Client* client, int worker_index, const FetchPlan& fetch,
                          const std::vector<int64_t>& inputs, MiniBatch* batch) const;
  // Rows `ids` of an input tensor (features or typed inputs), through the
  // remote-row cache when it holds that tensor, into a recycled buffer.
  Array pull_inputs(net::Client* client, int worker_index, const FetchPlan& fetch, const store::TensorSpec& spec,
                    const int64_t* ids, int64_t count) const;
  // MiniBatch::features and ::aggregated for blocks[0] (LoaderOptions::aggregate_inputs: the features are the
  // destinations' rows; set_input_aggregation: every source's).
  void aggregate_inputs(net::Client* client, int worker_index, const FetchPlan& fetch, MiniBatch* batch) const;
  std::shared_ptr<ArrayPool> input_rows_;  // buffers of batches' input rows, reused

  FetchPlan fetch_;  // guarded by mutex_
  std::string seed_ntype_;
  int64_t num_batches_ = 0;
  int epoch_ = 0;
  std::vector<Worker> workers_;  // one per sampler thread, or one for the caller
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable ready_cv_, space_cv_;
  std::map<int64_t, MiniBatch> ready_;
  int64_t next_claim_ = 0, next_deliver_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace tessera::sampling
