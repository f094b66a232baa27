// One training step of a KGE trainer, DGL-KE's way: gather the rows a batch
// of positives and its chunked negatives use (each row once), score, take
// the loss and the -rc penalty, backpropagate into those rows only, and push
// their gradients to the tables' row-wise Adagrad.
//
// Models with a fused form (fused_models.h) run FusedStep; the others, and
// tests that check the fused math against it, run the autograd path here.
// --train_mode 1vsAll runs AllEntitiesStep (all_entities_step.h) instead.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "embedding_table.h"
#include "nn/kge/loss.h"
#include "nn/kge/score_function.h"
#include "sampling/triple_sampler.h"

namespace tessera::kge {

struct Regularization {
  double coefficient = 0;            // -rc: the entity rows' weight
  double norm = 3;                   // -rn
  double relation_coefficient = -1;  // -rcr: the relation rows' weight; below 0: -rc's
  // --regularization_weighted (1vsAll / KvsAll): each row's penalty by its
  // share of the batch's uses (LibKGE's weighted Lp) instead of once.
  bool weighted = false;
  double relation() const { return relation_coefficient < 0 ? coefficient : relation_coefficient; }
};

// Seconds per phase and the loss parts, summed over steps.
struct StepTimes {
  double sample = 0, pull = 0, compute = 0, push = 0;
  double loss = 0, positive = 0, negative = 0, regularization = 0;
  int64_t steps = 0, triples = 0;
  void add(const StepTimes& o);
};

// The distinct IDs of a list (sorted) and, for each input, its position among them.
struct Distinct {
  std::vector<int64_t> unique;
  std::vector<int64_t> positions;
  std::vector<std::pair<int64_t, int64_t>> order;  // scratch, kept between calls
};
void distinct(const std::vector<int64_t>& ids, Distinct* out);

// Throws the error for a loss that is NaN or infinite, with the counts of
// non-finite values where they were found.
[[noreturn]] void fail_non_finite_loss(double loss, int64_t entity_values, int64_t relation_values,
                                       int64_t positive_scores, int64_t negative_scores);

class FusedStep;
class AllEntitiesStep;

class KgeStep {
 public:
  enum class Path { kFastest, kAutograd };
  // One per worker thread (a fused step keeps buffers).
  KgeStep(const ScoreOptions& model, const ScoreFunction& score, const LossOptions& loss, const Regularization& reg,
          Path path = Path::kFastest);
  // A 1vsAll step.
  explicit KgeStep(std::unique_ptr<AllEntitiesStep> all_entities);
  ~KgeStep();
  KgeStep(KgeStep&&) noexcept;
  bool fused() const { return fused_ != nullptr; }
  // Runs `batch` and adds its times (all but sampling) and loss to `times`.
  void run(const sampling::TripleBatch& batch, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times);

 private:
  void run_autograd(const sampling::TripleBatch& batch, EmbeddingTable& entities, EmbeddingTable& relations,
                    StepTimes* times) const;

  const ScoreFunction* score_;
  LossOptions loss_;
  Regularization reg_;
  std::unique_ptr<FusedStep> fused_;
  std::unique_ptr<AllEntitiesStep> all_entities_;
};

}  // namespace tessera::kge
