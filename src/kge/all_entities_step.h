// One 1vsAll or KvsAll training step (LibKGE's; Lacroix et al.'s training
// of ComplEx-N3). 1vsAll: each positive (h, r, t) of the batch asks two
// queries, its tail given (h, r) and its head given (r, t) (with
// --reciprocal: its head as the tail of (t, r', ?), r' the inverse
// relation's own row). KvsAll: each row of the batch is a query of
// kvsall_queries.h with all its known answers. Each query is scored against
// every entity; the loss is the softmax cross-entropy of the query's target
// distribution (its answers, equally; with label smoothing ls, LibKGE's
// labels (1 - ls) [answer] + 1 / entities, normalised) among all of them,
// averaged over the queries, plus the -rc penalty of the rows the batch names.
//
// For the models whose score is a product with the candidate entity
// (DistMult, ComplEx, RESCAL; fused_models.h's kDot) the queries' scores are one
// GEMM, [queries x d] x [d x entities], taken in chunks of queries that
// bound the memory, and the backward pass is two more:
//   dQ = dS x E   and   dE += dS^T x Q,
// so a step costs about three GEMMs of the batch against the whole table
// (bench/kge.sh prints it against that bound). Every entity row gets a
// gradient, so the table's optimizer (--optimizer) steps all of it.
//
// Standalone, one worker: the step reads the table in place while no other
// thread writes it, and its GEMMs take every thread. With the entity table
// on the servers (a ServerTable), the step pulls only the rows its batch
// names; the servers score the queries against their shards and step them
// (sharded_candidates.h), and the trainer computes the queries, their
// backward and the penalty, as here.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kge_step.h"
#include "kvsall_queries.h"
#include "nn/kge/fused_models.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::kge {

// Why `options` cannot train this way ("" when they can); the reason names
// the flag and what to use instead. Checked before the graph is read.
// `mode`: the --train_mode the reason names (1vsAll or KvsAll).
std::string all_entities_refusal(const ScoreOptions& model, int num_proc, const std::string& mode = "1vsAll");

// Bytes a step of `queries` queries needs at least beside the tables: the
// dense entity gradient and the smallest chunk of scores it runs.
int64_t all_entities_min_bytes(int64_t num_entities, int64_t entity_dim, int64_t queries);

// The queries a chunk of scores holds within `budget_bytes`: at most the
// batch's `queries` (1vsAll: 2 x batch_size; KvsAll: batch_size), and 0 when
// not even the smallest chunk fits.
int64_t all_entities_chunk_rows(int64_t num_entities, int64_t entity_dim, int64_t queries, int64_t budget_bytes);

// Dropout on the embeddings a step reads, in training only (LibKGE's
// embedder dropout): each element of a query's anchor row (`entity`) and
// relation row (`relation`) is zeroed with that probability and the rest
// scaled by 1 / (1 - p), each query with its own draws, and the candidate
// table's elements (`entity`) with one draw per step. The penalty reads the
// rows themselves.
struct EmbeddingDropout {
  double entity = 0, relation = 0;
};

// The draws a step took (its base seeds): query i's anchor and relation rows
// take query_draw(base, i, their width), the candidate table `candidates`.
// KvsAll: the queries a batch's rows name, and LibKGE's label smoothing.
struct MultiLabel {
  const KvsAllQueries* queries = nullptr;  // null: 1vsAll
  double label_smoothing = 0;              // in [0, 1)
};

struct StepDraws {
  nn::detail::DropoutDraw anchors, relations, candidates;
};
nn::detail::DropoutDraw query_draw(const nn::detail::DropoutDraw& base, int64_t query, int64_t width);

class AllEntitiesStep {
 public:
  // `num_relations`: the graph's (the table holds twice as many with
  // `reciprocal`, the inverses after them). `kvsall.queries`, when given,
  // outlives the step.
  AllEntitiesStep(const ScoreOptions& model, const Regularization& reg, int64_t num_relations, bool reciprocal,
                  int64_t chunk_rows, EmbeddingDropout dropout = {}, MultiLabel kvsall = {});

  // One step on `batch`'s positives (its negatives are not used); with
  // KvsAll on its rows (anchor, relation row, query id) of the queries.
  void run(const sampling::TripleBatch& batch, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times);

  // The batch's loss (cross-entropy plus penalty) and its gradients into
  // `entity_grad` [entities x entity_dim] and `relation_grad` [rows x
  // relation_dim] (zeroed first), from tables `entities` and `relations`.
  double loss_and_gradients(const sampling::TripleBatch& batch, const torch::Tensor& entities,
                            const torch::Tensor& relations, torch::Tensor* entity_grad, torch::Tensor* relation_grad,
                            double* cross_entropy);

  // The dropout draws of the last step (a test rebuilds its masks).
  const StepDraws& last_draws() const { return draws_; }

 private:
  const char* mode() const { return kvsall_.queries != nullptr ? "KvsAll" : "1vsAll"; }
  void run_on_servers(const sampling::TripleBatch& batch, ServerTable& entities, LocalTable& relations,
                      StepTimes* times);
  void check_relations(const torch::Tensor& relations) const;
  // Where entity `id`'s row is in the rows a step reads: the table's own
  // row, or (on the servers) its place among the rows the batch pulled.
  int64_t slot(int64_t id) const { return slots_.empty() ? id : slots_[id]; }
  // Each query's target weights (answer_weight_, uniform_weight_).
  void set_weights(int64_t num_entities);
  // This step's dropout draws and its queries (queries_) from rows `e`, `r`.
  void build_queries(const float* e, const float* r);
  // The summed cross-entropy against the whole table `entities`, dQ into
  // query_grad_ and the table's gradient into *entity_grad.
  double score_locally(const torch::Tensor& entities, torch::Tensor* entity_grad);
  // dQ through the queries into their anchor rows (ge) and relation rows (gr).
  void backward_queries(const float* e, const float* r, float* ge, float* gr);
  // distinct_entities_: the entity rows the step reads (anchors; KvsAll's answers under a penalty).
  void collect_batch_entities();
  // The -rc penalty of the batch's rows, its gradient added to ge and gr.
  double penalty(int64_t positives, const float* e, const float* r, float* ge, float* gr);
  void prepare_relation_grad(const torch::Tensor& relations);
  void count(const sampling::TripleBatch& batch, double loss, double cross_entropy, StepTimes* times) const;
  // Query i's anchor and relation rows as its scores read them: the table's
  // rows, or copies with the query's dropout in the step's scratch rows.
  void query_rows(int64_t i, const float* entities, const float* relations, const float** anchor,
                  const float** relation);
  // The step's queries and their answers (target_offsets_, targets_) from the batch.
  void set_queries(const sampling::TripleBatch& batch);

  std::unique_ptr<FusedModel> model_;
  Regularization reg_;
  int64_t num_relations_;
  bool reciprocal_;
  int64_t chunk_rows_;
  EmbeddingDropout dropout_;
  MultiLabel kvsall_;
  StepDraws draws_;
  // Kept between steps.
  std::vector<int64_t> entity_uses_, slots_;
  std::vector<int64_t> all_entity_ids_, all_relation_ids_, anchors_, relations_, target_offsets_, targets_,
      batch_entities_;
  Distinct distinct_entities_;
  std::vector<char> as_head_;
  std::vector<float> answer_weight_, uniform_weight_, anchor_row_, relation_row_, anchor_grad_, relation_grad_row_;
  torch::Tensor queries_, query_grad_, scores_, candidates_, entity_grad_, relation_grad_;
};

}  // namespace tessera::kge
