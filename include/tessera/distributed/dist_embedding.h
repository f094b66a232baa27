// DistEmbedding: a learnable embedding table sharded like a DistTensor, and the sparse optimizers that update
// it. A trainer pulls the rows a batch uses and pushes back gradients for exactly those rows; the owning
// servers apply the optimizer, whose state lives beside the rows in shared memory.
//
// Constructing a DistEmbedding or an optimizer is collective (it creates tensors); lookups and steps are not.
// Both hold a pointer to the Context, which must outlive them; an optimizer does not own the embeddings it was
// given, which must outlive its steps. lookup() returns a new Array. Like the Context they use its connection,
// so each belongs to the Context's thread; step_async() requests stay in flight until flush() or step().
// Errors are tessera::Error naming the embedding or file: a non-positive dimension, a saved table of the wrong
// shape or dtype, an ID out of range, or a server that does not answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_tensor.h"
#include "tessera/store/sparse_step.h"

namespace tessera::distributed {

class DistEmbedding {
 public:
  // Collective, as DGL's DistEmbedding(num_embeddings, embedding_dim, name,
  // init_func, part_policy): one row per ID of `policy`'s space.
  DistEmbedding(Context& ctx, const std::string& name, int64_t dim, const std::string& policy,
                store::Initializer init = {});

  const std::string& name() const { return weight_.name(); }
  int64_t dim() const { return dim_; }
  int64_t num_embeddings() const { return weight_.num_rows(); }
  const DistTensor& weight() const { return weight_; }
  Array lookup(const int64_t* ids, int64_t count) const { return weight_.pull(ids, count); }

  // The whole table as .npy, row i = original ID i (new IDs are mapped back
  // through the partition's ID maps). Called by one trainer.
  void save(const std::string& path) const;
  // Reads a table saved by save() (or any [num_embeddings, dim] float32
  // .npy in original IDs). Called by one trainer; barrier afterwards.
  void load(const std::string& path) const;

 private:
  Context* ctx_;
  int64_t dim_;
  DistTensor weight_;
};

// A whole row-sharded tensor with row i = original ID i (new IDs mapped back
// through the partition's ID maps), and its inverse. For saving and loading
// tables and optimizer state; called by one trainer.
Array read_in_original_order(Context& ctx, const DistTensor& tensor);
void write_in_original_order(Context& ctx, const DistTensor& tensor, const Array& table);

// Sums the gradients of repeated IDs: (unique ids, summed rows).
void coalesce_gradients(const int64_t* ids, int64_t count, const float* grads, int64_t dim,
                        std::vector<int64_t>* unique_ids, std::vector<float>* summed);

class SparseOptimizer {
 public:
  virtual ~SparseOptimizer() = default;
  // Applies one step to `embedding`'s rows `ids` (repeats allowed: their
  // gradients are summed first, as autograd would).
  void step(const DistEmbedding& embedding, const int64_t* ids, int64_t count, const float* grads);
  // The same without waiting for the servers' acknowledgements, as DGL's
  // pushes go: the update lands while the trainer computes its next batch.
  // flush() waits for every step sent so far (call it before reading the
  // embeddings back, and once per training step to bound what is in flight).
  void step_async(const DistEmbedding& embedding, const int64_t* ids, int64_t count, const float* grads);
  void flush();
  void set_lr(double lr) { params_.lr = lr; }
  // What a checkpoint of the embeddings it trains holds: each embedding's
  // rows and its optimizer state (distributed/dist_checkpoint.h).
  const std::vector<std::string>& tensors() const { return tensors_; }

 protected:
  SparseOptimizer(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, store::SparseStepParams params);
  Context* ctx_;
  store::SparseStepParams params_;
  std::vector<DistTensor> state_;  // keeps the state tensors alive
  std::vector<uint64_t> in_flight_;  // requests of step_async not yet acknowledged
  std::vector<std::string> tensors_;
};

// torch.optim.Adagrad, per element, on touched rows only.
class SparseAdagrad : public SparseOptimizer {
 public:
  SparseAdagrad(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr, double eps = 1e-10);
};

// DGL-KE's Adagrad: one accumulator per row (the mean squared gradient of
// the row), which is what its knowledge-graph embeddings train with.
class SparseRowAdagrad : public SparseOptimizer {
 public:
  SparseRowAdagrad(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr,
                   double eps = 1e-10);
};

// torch.optim.Adam on touched rows, bias-corrected by each row's own step count.
class SparseAdam : public SparseOptimizer {
 public:
  SparseAdam(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr, double beta1 = 0.9,
             double beta2 = 0.999, double eps = 1e-8);
};

}  // namespace tessera::distributed
