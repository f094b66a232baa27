// Where a KGE trainer's embedding rows live and how they learn: it pulls the
// rows a batch uses and pushes their gradients back, and the table applies
// its optimizer (--optimizer): DGL-KE's row-wise Adagrad, torch's
// element-wise Adagrad (LibKGE's), or Adam with a step count per row (DGL's
// SparseAdam; a row stepped at every step, as 1vsAll's entities are, takes
// torch.optim.Adam's steps exactly). A LocalTable keeps the rows in this process
// (standalone training, where worker threads update it Hogwild-style, and
// the replicated relation table of distributed training); a ServerTable is a
// DistEmbedding whose rows the servers hold and update.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sharded_candidates.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/store/sparse_step.h"
#include "store/row_locks.h"
#include "tessera/store/tensor.h"

namespace tessera::kge {

// Rows of a table by pointer: into `copies` for rows this process's table
// (or machine's shared memory) holds, copied under the row locks its writers
// take, into `storage` for rows pulled from servers. The step's own snapshot:
// concurrent pushes (Hogwild workers, the servers) never change it. Valid
// until the next pull into the same PulledRows.
struct PulledRows {
  std::vector<const float*> rows;
  std::vector<float> copies;
  torch::Tensor storage;
};

class EmbeddingTable {
 public:
  virtual ~EmbeddingTable() = default;
  virtual int64_t num_rows() const = 0;
  virtual int64_t dim() const = 0;
  // Rows `ids` (unique) as a new [n, dim] tensor.
  virtual torch::Tensor pull(const std::vector<int64_t>& ids) = 0;
  // The same rows without a copy where the table allows (the fused step).
  virtual void pull_rows(const std::vector<int64_t>& ids, PulledRows* out);
  // One optimizer step on rows `ids` (unique), gradient [n, dim].
  virtual void push(const std::vector<int64_t>& ids, const torch::Tensor& grad) = 0;
  // Waits until every push has landed.
  virtual void flush() {}
  // The whole table, row i = original ID i, and the optimizer's state, flat:
  // its tensors (store::sparse_step_tensors' order) one after the other,
  // each in row order (row-wise Adagrad: [num_rows]; element-wise: [num_rows
  // x dim]; Adam: [num_rows x dim] twice, then the steps [num_rows]).
  virtual torch::Tensor read_all() = 0;
  virtual torch::Tensor read_state() = 0;
  // Replaces the table and its optimizer state (resume); the same shapes.
  virtual void write_all(const torch::Tensor& weights, const torch::Tensor& state) = 0;
  // The servers' tensors that hold the table and its optimizer state, which
  // they checkpoint themselves; none for a table in this process.
  virtual std::vector<std::string> server_tensors() const { return {}; }
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }

 protected:
  double lr_ = 0.01;
};

// DGL-KE's initialisation: uniform in [-range, range).
store::Initializer uniform_init(double range, uint64_t seed);

// --optimizer's value ("row_adagrad", "adagrad", "adam") as the store's kind; fails naming the choices.
store::SparseOptimizer kge_optimizer(const std::string& name);
// The epsilon a table's optimizer adds (torch's defaults: Adagrad 1e-10, Adam 1e-8).
double optimizer_eps(store::SparseOptimizer kind);

class LocalTable : public EmbeddingTable {
 public:
  LocalTable(const std::string& name, int64_t rows, int64_t dim, const store::Initializer& init, double lr,
             store::SparseOptimizer optimizer = store::SparseOptimizer::kRowAdagrad);
  int64_t num_rows() const override { return weight_.num_rows(); }
  int64_t dim() const override { return dim_; }
  torch::Tensor pull(const std::vector<int64_t>& ids) override;
  // Other workers update the table meanwhile, as in DGL-KE's Hogwild-style
  // shared tables; each row is read under the stripe lock those updates
  // hold, so a step sees whole rows and never races a write.
  void pull_rows(const std::vector<int64_t>& ids, PulledRows* out) override;
  void push(const std::vector<int64_t>& ids, const torch::Tensor& grad) override;
  torch::Tensor read_all() override { return view().clone(); }
  torch::Tensor read_state() override;
  void write_all(const torch::Tensor& weights, const torch::Tensor& state) override;
  // The rows in place (shared with every worker thread).
  torch::Tensor view();
  // See SparseStepParams::state_weight: a replica among `trainers` counts its
  // own squared gradients `trainers` times (Adam's moments and steps count
  // once: the merge of the replicas then averages them).
  void set_replicas(int trainers) { state_weight_ = static_cast<float>(trainers); }
  float state_weight() const { return state_weight_; }

 private:
  // The state tensors in place, in read_state()'s order.
  std::vector<torch::Tensor> state_views();

  int64_t dim_;
  store::SparseOptimizer optimizer_;
  store::LocalTensor weight_;
  std::vector<store::LocalTensor> state_;  // store::sparse_step_tensors' order
  std::vector<uint32_t> lock_memory_;
  store::RowLocks locks_;
  float state_weight_ = 1.0f;
};

class ServerTable : public EmbeddingTable {
 public:
  // Collective: every trainer creates it with the same arguments.
  // The servers step it with `optimizer`.
  ServerTable(distributed::Context& ctx, const std::string& name, int64_t dim, const std::string& policy,
              const store::Initializer& init, double lr,
              store::SparseOptimizer optimizer = store::SparseOptimizer::kRowAdagrad);
  int64_t num_rows() const override { return embedding_.num_embeddings(); }
  int64_t dim() const override { return embedding_.dim(); }
  torch::Tensor pull(const std::vector<int64_t>& ids) override;
  // Rows of this machine's partition copied from shared memory under the
  // machine's row locks, where this trainer also writes them
  // (Context::writes_in_place); the others pulled.
  void pull_rows(const std::vector<int64_t>& ids, PulledRows* out) override;
  // Sends the step and returns; the previous push is waited for first, so
  // at most one is in flight while the trainer computes (as DGL-KE's async
  // pushes go).
  void push(const std::vector<int64_t>& ids, const torch::Tensor& grad) override;
  void flush() override;
  store::SparseOptimizer optimizer_kind() const { return kind_; }
  // The table as every entity's candidates of 1vsAll / KvsAll queries,
  // scored and stepped on the servers (made on first use).
  ShardedCandidates& candidates();
  torch::Tensor read_all() override;
  torch::Tensor read_state() override;
  void write_all(const torch::Tensor& weights, const torch::Tensor& state) override;
  std::vector<std::string> server_tensors() const override { return optimizer_->tensors(); }

 private:
  // The optimizer's state tensors, in read_state()'s order.
  std::vector<distributed::DistTensor> state_tensors() const;

  distributed::Context* ctx_;
  store::SparseOptimizer kind_;
  distributed::DistEmbedding embedding_;
  std::unique_ptr<distributed::SparseOptimizer> optimizer_;
  std::unique_ptr<ShardedCandidates> candidates_;
};

// A float32 Array as a tensor sharing its memory (the Array stays alive).
torch::Tensor tensor_of(const Array& array);
Array array_of(const torch::Tensor& tensor);  // a contiguous float32 copy

}  // namespace tessera::kge
