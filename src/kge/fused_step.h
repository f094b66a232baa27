// A KGE training step without an autograd graph: the rows a batch uses are
// read in place (a local table) or pulled once (a server table), each
// chunk's queries and negatives are packed into buffers this step keeps, the
// negative scores and their gradients are batched GEMMs (or the L1 kernels),
// the loss's gradients are written out by hand, and the gradients of every
// occurrence of a row are summed into one row per distinct ID before the
// table's row-wise Adagrad takes them. Same math as KgeStep's autograd path.
//
// One per worker thread: it owns its buffers.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <memory>
#include <vector>

#include "nn/kge/chunk_scorer.h"
#include "nn/kge/fused_models.h"
#include "kge_step.h"

namespace tessera::kge {

class FusedStep {
 public:
  FusedStep(std::unique_ptr<FusedModel> model, const LossOptions& loss, const Regularization& reg)
      : model_(std::move(model)),
        scorer_(model_->negative_kind(), model_->gamma()),
        loss_(loss),
        reg_(reg) {}
  void run(const sampling::TripleBatch& batch, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times);

 private:
  // Adds the -rc penalty's gradient into the row gradients; returns the penalty.
  double regularize(int64_t num_relations);
  [[noreturn]] void fail_non_finite(double loss, const torch::Tensor& positive, const torch::Tensor& negative) const;

  std::unique_ptr<FusedModel> model_;
  ChunkScorer scorer_;
  LossOptions loss_;
  Regularization reg_;
  // Kept between steps.
  Distinct entity_ids_, relation_ids_;
  std::vector<int64_t> all_entities_;
  PulledRows entity_rows_, relation_rows_;
  std::vector<const float*> work_rows_;  // relation rows as the model reads them
  std::vector<int32_t> relation_counts_;
  std::vector<float> work_, queries_, negatives_, scores_, positive_, query_grad_, negative_grad_;
  std::vector<float> entity_grad_, work_grad_, relation_grad_;
};

}  // namespace tessera::kge
