// The trainer's half of 1vsAll / KvsAll training with the entity table on
// the servers: every entity is a candidate of a step's queries, and each
// partition's server scores the queries against its own shard
// (shard_scores_service.h has the protocol). The trainer combines the
// servers' partial sums into each query's log-sum-exp and cross-entropy,
// sends back what the servers need for the softmax's gradient, and sums
// their shares of dQ; the shards' own gradients never leave the servers.
//
// Per step and server, what crosses the network is the queries and their
// gradient (2 x n x d floats), four doubles and three floats per query, the
// targets, and the batch's own rows' gradients: O(n x d x servers), against
// the O(entities x d) of pulling every row and pushing its gradient.
//
// One per trainer, used by the thread that owns the Context's connection.
//
// Private header: it includes libtorch.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/store/sparse_step.h"

namespace tessera::kge {

// The step's queries and what each one's target distribution puts where:
// answer_weight[i] on each of its answers (targets[target_offsets[i]..
// target_offsets[i + 1]), partition IDs), uniform_weight[i] on every entity.
struct QueryTargets {
  const std::vector<int64_t>* target_offsets = nullptr;
  const std::vector<int64_t>* targets = nullptr;
  const std::vector<float>* answer_weight = nullptr;
  const std::vector<float>* uniform_weight = nullptr;
};

class ShardedCandidates {
 public:
  // `tensor`: the entity table's rows on the servers, sharded by `policy`'s
  // ID space, `dim` wide, stepped by Adagrad of `kind` (row-wise or
  // element-wise; its state beside it).
  ShardedCandidates(distributed::Context& ctx, std::string tensor, const std::string& policy, int64_t dim,
                    store::SparseOptimizer kind);

  // The most rows one server holds (what its scores of a step take).
  int64_t largest_shard() const;

  // The summed cross-entropy of `queries` [n x dim] (contiguous) against
  // every entity, and d(its sum x scale) / d queries into *query_grad
  // [n x dim]. `dropout` and `seed`: the candidates' dropout this step (each
  // server draws its rows as a standalone table of the same seed would when
  // dim is a multiple of 4; otherwise from a stream of its own).
  double cross_entropy(const torch::Tensor& queries, const QueryTargets& targets, float scale, double dropout,
                       uint64_t seed, torch::Tensor* query_grad);

  // Adds `grads` [ids x dim] (partition IDs, unique) to the gradient the
  // servers kept from the last cross_entropy, and steps every shard once.
  // Returns without waiting; the next call waits.
  void step(const std::vector<int64_t>& ids, const torch::Tensor& grads, double lr);
  // Waits until every step has landed.
  void flush();

  // Counts the pull of a step's own `rows` rows (and their IDs) as moved,
  // though a machine's own rows come from its shared memory: an upper bound.
  void count_pulled(int64_t rows) { bytes_ += rows * (dim_ * static_cast<int64_t>(sizeof(float)) + 8); }
  // Bytes sent and received, summed over the servers (with count_pulled's),
  // and the steps counted.
  int64_t bytes() const { return bytes_; }
  int64_t steps() const { return steps_; }

 private:
  int shard_of(int64_t id) const;

  distributed::Context* ctx_;
  std::string tensor_;
  int64_t dim_;
  store::SparseOptimizer kind_;
  std::vector<int64_t> starts_;  // shard p: IDs [starts_[p], starts_[p + 1])
  std::vector<int> servers_;     // the server each shard's requests go to
  std::vector<uint64_t> in_flight_;
  int64_t bytes_ = 0, steps_ = 0;
};

}  // namespace tessera::kge
