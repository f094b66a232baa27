#include "kge_step.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/field_sums.h"
#include "all_entities_step.h"
#include "fused_step.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera::kge {

namespace {

template <class Times>
auto summed_step_fields(Times& t) {
  return std::tie(t.sample, t.pull, t.compute, t.push, t.loss, t.positive, t.negative, t.regularization, t.steps,
                  t.triples);
}

}  // namespace

void StepTimes::add(const StepTimes& o) { add_fields(summed_step_fields(*this), summed_step_fields(o)); }

void distinct(const std::vector<int64_t>& ids, Distinct* d) {
  // Sorting (ID, index) pairs hands every input its position in one pass
  // over them; a binary search per input instead cost 10x as much (its
  // branches are unpredictable), 3% of a TransE step.
  std::vector<std::pair<int64_t, int64_t>>& order = d->order;
  order.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) order[i] = {ids[i], static_cast<int64_t>(i)};
  std::sort(order.begin(), order.end());
  d->unique.clear();
  d->positions.resize(ids.size());
  for (const auto& [id, index] : order) {
    if (d->unique.empty() || d->unique.back() != id) d->unique.push_back(id);
    d->positions[index] = static_cast<int64_t>(d->unique.size()) - 1;
  }
}

void fail_non_finite_loss(double loss, int64_t entity_values, int64_t relation_values, int64_t positive_scores,
                          int64_t negative_scores) {
  fail("the loss became {} (non-finite values: {} in the entity rows, {} in the relation rows, {} positive and "
       "{} negative scores); try a smaller --lr or --gamma",
       loss, entity_values, relation_values, positive_scores, negative_scores);
}

KgeStep::KgeStep(const ScoreOptions& model, const ScoreFunction& score, const LossOptions& loss,
                 const Regularization& reg, Path path)
    : score_(&score), loss_(loss), reg_(reg) {
  if (path == Path::kFastest)
    if (auto fused = make_fused_model(model)) fused_ = std::make_unique<FusedStep>(std::move(fused), loss, reg);
}

KgeStep::KgeStep(std::unique_ptr<AllEntitiesStep> all_entities)
    : score_(nullptr), all_entities_(std::move(all_entities)) {}

KgeStep::~KgeStep() = default;
KgeStep::KgeStep(KgeStep&&) noexcept = default;

void KgeStep::run(const sampling::TripleBatch& b, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times) {
  if (all_entities_) return all_entities_->run(b, entities, relations, times);
  if (fused_) fused_->run(b, entities, relations, times);
  else run_autograd(b, entities, relations, times);
}

void KgeStep::run_autograd(const sampling::TripleBatch& b, EmbeddingTable& entities, EmbeddingTable& relations,
                           StepTimes* times) const {
  Timer timer;
  const int64_t n = b.size();
  std::vector<int64_t> entity_ids;
  b.entities(&entity_ids);
  Distinct ents, rels;
  distinct(entity_ids, &ents);
  distinct(b.relation, &rels);
  auto positions = [](Distinct& d) {
    return torch::from_blob(d.positions.data(), {static_cast<int64_t>(d.positions.size())}, torch::kInt64);
  };
  const torch::Tensor entity_rows = entities.pull(ents.unique).set_requires_grad(true);
  const torch::Tensor relation_rows = relations.pull(rels.unique).set_requires_grad(true);
  times->pull += timer.lap();

  const torch::Tensor gathered = entity_rows.index_select(0, positions(ents));
  const torch::Tensor h = gathered.narrow(0, 0, n), t = gathered.narrow(0, n, n);
  const torch::Tensor negatives = gathered.narrow(0, 2 * n, static_cast<int64_t>(b.negatives.size()))
                                      .view({b.num_chunks, b.negatives_per_chunk, -1});
  const torch::Tensor r = relation_rows.index_select(0, positions(rels));
  const torch::Tensor positive = score_->positive(h, r, t);
  const torch::Tensor anchor = (b.corrupt_head ? t : h).view({b.num_chunks, b.chunk_size, -1});
  const torch::Tensor negative =
      score_->negative(anchor, r.view({b.num_chunks, b.chunk_size, -1}), negatives, b.corrupt_head)
          .reshape({n, b.negatives_per_chunk});
  Loss loss = kge_loss(positive, negative, loss_);
  torch::Tensor total = loss.total;
  double penalty = 0;
  if (reg_.coefficient > 0 || reg_.relation() > 0) {
    const torch::Tensor reg =
        regularization({entity_rows}, reg_.coefficient, reg_.norm) + regularization({r}, reg_.relation(), reg_.norm);
    penalty = reg.item<double>();
    total = total + reg;
  }
  const double loss_value = total.item<double>();
  if (!std::isfinite(loss_value)) {
    auto bad = [](const torch::Tensor& x) { return (~torch::isfinite(x.detach())).sum().item<int64_t>(); };
    fail_non_finite_loss(loss_value, bad(entity_rows), bad(relation_rows), bad(positive), bad(negative));
  }
  total.backward();
  times->compute += timer.lap();

  entities.push(ents.unique, entity_rows.grad());
  relations.push(rels.unique, relation_rows.grad());
  times->push += timer.lap();
  times->loss += loss_value;
  times->positive += loss.positive;
  times->negative += loss.negative;
  times->regularization += penalty;
  times->steps += 1;
  times->triples += n;
}

}  // namespace tessera::kge
