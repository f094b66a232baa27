#include "train/rgcn_task.h"

#include <torch/torch.h>

#include <utility>

#include "tessera/base/timer.h"
#include "tessera/train/batch_views.h"

namespace tessera::train {
namespace {

// One batch in the model's terms. Embedding rows are leaves whose gradient
// goes to the sparse optimizer.
struct BatchTensors {
  std::vector<nn::RelBlock> blocks;
  std::vector<nn::TypedRows> inputs;
  std::vector<int> embedded;  // indices into inputs of embedding rows
};

BatchTensors batch_tensors(const sampling::MiniBatch& batch, const PartitionConfig& config,
                           const std::vector<std::unique_ptr<distributed::DistEmbedding>>& embeddings, bool train) {
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
    if (embeddings[g.ntype] && train) {
      rows.rows.requires_grad_(true);
      t.embedded.push_back(static_cast<int>(t.inputs.size()));
    }
    t.inputs.push_back(std::move(rows));
  }
  return t;
}

}  // namespace

RgcnTask::RgcnTask(const PartitionConfig& config, nn::Rgcn& model, torch::optim::Optimizer& optimizer,
                   distributed::Collectives& coll,
                   const std::vector<std::unique_ptr<distributed::DistEmbedding>>& embeddings,
                   distributed::SparseOptimizer* sparse)
    : config_(config), model_(model), optimizer_(optimizer), coll_(coll), embeddings_(embeddings), sparse_(sparse) {}

StepResult RgcnTask::step(const sampling::MiniBatch& batch) {
  Timer t;
  BatchTensors bt = batch_tensors(batch, config_, embeddings_, true);
  const double prepare = t.seconds();
  StepResult r = supervised_step(*model_, optimizer_, coll_, [&] { return model_->forward(bt.blocks, bt.inputs); },
                                 labels_of(batch));
  r.compute_s += prepare;
  t.reset();
  // Embedding gradients go out without waiting; the servers apply them
  // while the next batch computes, and the next step first waits for
  // these acknowledgements, so at most one step is in flight.
  if (sparse_) sparse_->flush();
  for (const int k : bt.embedded) {
    const sampling::TypedInputs& group = batch.inputs[k];
    // No gradient: these rows did not reach the loss (a type whose
    // nodes send no message to the seeds, without a self-loop).
    // Their gradient is zero and, as in DGL, they are not updated.
    if (!bt.inputs[k].rows.grad().defined()) continue;
    const torch::Tensor grad = bt.inputs[k].rows.grad().contiguous();
    sparse_->step_async(*embeddings_[group.ntype], group.ids.data(), static_cast<int64_t>(group.ids.size()),
                        grad.data_ptr<float>());
  }
  r.sparse_s = t.seconds();
  return r;
}

torch::Tensor RgcnTask::logits(const sampling::MiniBatch& batch) {
  const BatchTensors t = batch_tensors(batch, config_, embeddings_, false);
  return model_->forward(t.blocks, t.inputs);
}

}  // namespace tessera::train
