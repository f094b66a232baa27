// DGL-KE's score functions with their gradients written out by hand, on
// plain float rows: what the fused KGE step runs instead of building an
// autograd graph per step. Each model says how a positive triple scores and
// how a chunk's query row is built from the kept entity and the relation;
// the negatives of a chunk are then scored against the queries in one of
// four ways (NegativeKind), the matrix-product ones by GEMM.
//
// TransE (L1 / L2), DistMult, ComplEx, RESCAL and RotatE have one; TransR
// and SimplE train through score_function.h's autograd forms. The math is
// the same as there (kge_fused_test.cc compares the two).
#pragma once

#include <cstdint>
#include <memory>

#include "score_function.h"

namespace tessera::kge {

// How a chunk's negatives score against its queries q (one per positive):
//   kDot:       q . n                      (DistMult, ComplEx, RESCAL)
//   kL2:        gamma - ||q - n||_2        (TransE_l2)
//   kL1:        gamma - ||q - n||_1        (TransE_l1)
//   kComplexL1: gamma - sum_j |q_j - n_j|  over complex halves (RotatE)
enum class NegativeKind { kDot, kL2, kL1, kComplexL1 };

class FusedModel {
 public:
  virtual ~FusedModel() = default;
  int64_t entity_dim() const { return entity_dim_; }
  int64_t relation_dim() const { return relation_dim_; }
  NegativeKind negative_kind() const { return kind_; }
  double gamma() const { return gamma_; }

  // The relation rows the functions below read ("work" rows): the stored
  // rows themselves, except where a model transforms them once per step
  // (RotatE: phases become [cos | sin], not recomputed per positive).
  virtual bool transforms_relations() const { return false; }
  virtual int64_t work_dim() const { return relation_dim_; }
  virtual void to_work(const float* /*stored*/, float* /*work*/) const {}
  // Adds into `grad` the gradient of a stored row whose work row (made by
  // to_work) got `work_grad`.
  virtual void from_work_grad(const float* /*work*/, const float* /*work_grad*/, float* /*grad*/) const {}

  // The score of (h, r, t); r is a work row.
  virtual float positive(const float* h, const float* r, const float* t) const = 0;
  // Adds g * d score / d (h, r, t) into dh, dr, dt (which may alias);
  // `score` is what positive() returned for them.
  virtual void positive_backward(float g, float score, const float* h, const float* r, const float* t, float* dh, float* dr,
                                 float* dt) const = 0;
  // The query of the kept entity `a` (the tail when heads are corrupted) and
  // relation r: entity_dim floats into q.
  virtual void query(const float* a, const float* r, bool corrupt_head, float* q) const = 0;
  // Adds the gradient of the query, dq, into da and dr.
  virtual void query_backward(const float* dq, const float* a, const float* r, bool corrupt_head, float* da,
                              float* dr) const = 0;

 protected:
  FusedModel(int64_t entity_dim, int64_t relation_dim, NegativeKind kind, double gamma)
      : entity_dim_(entity_dim), relation_dim_(relation_dim), kind_(kind), gamma_(gamma) {}

 private:
  int64_t entity_dim_, relation_dim_;
  NegativeKind kind_;
  double gamma_;
};

// The fused form of `options`' model, or nullptr where it has none. Options
// are assumed valid (make_score_function checked them).
std::unique_ptr<FusedModel> make_fused_model(const ScoreOptions& options);

}  // namespace tessera::kge
