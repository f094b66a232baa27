// One training step of a KGE trainer, DGL-KE's way: gather the rows a batch
// of positives and its chunked negatives use (each row once), score, take
// the loss and the -rc penalty, backpropagate into those rows only, and push
// their gradients to the tables' row-wise Adagrad.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include "embedding_table.h"
#include "loss.h"
#include "score_function.h"
#include "triple_sampler.h"

namespace tessera::kge {

struct Regularization {
  double coefficient = 0;  // -rc
  double norm = 3;         // -rn
};

// Seconds per phase and the loss parts, summed over steps.
struct StepTimes {
  double sample = 0, pull = 0, compute = 0, push = 0;
  double loss = 0, positive = 0, negative = 0, regularization = 0;
  int64_t steps = 0, triples = 0;
  void add(const StepTimes& o);
};

class KgeStep {
 public:
  KgeStep(const ScoreFunction& score, const LossOptions& loss, const Regularization& reg)
      : score_(score), loss_(loss), reg_(reg) {}
  // Runs `batch` and adds its times (all but sampling) and loss to `times`.
  void run(const TripleBatch& batch, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times) const;

 private:
  const ScoreFunction& score_;
  LossOptions loss_;
  Regularization reg_;
};

}  // namespace tessera::kge
