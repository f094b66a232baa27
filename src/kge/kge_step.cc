#include "kge_step.h"

#include <algorithm>
#include <cmath>

#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera::kge {

void StepTimes::add(const StepTimes& o) {
  sample += o.sample;
  pull += o.pull;
  compute += o.compute;
  push += o.push;
  loss += o.loss;
  positive += o.positive;
  negative += o.negative;
  regularization += o.regularization;
  steps += o.steps;
  triples += o.triples;
}

namespace {

// The distinct IDs of `ids` (sorted) and, for each input, its position among them.
struct Distinct {
  std::vector<int64_t> unique;
  torch::Tensor positions;  // int64 [ids.size()]
};

Distinct distinct(const std::vector<int64_t>& ids) {
  Distinct d;
  d.unique = ids;
  std::sort(d.unique.begin(), d.unique.end());
  d.unique.erase(std::unique(d.unique.begin(), d.unique.end()), d.unique.end());
  d.positions = torch::empty({static_cast<int64_t>(ids.size())}, torch::kInt64);
  int64_t* p = d.positions.data_ptr<int64_t>();
  for (size_t i = 0; i < ids.size(); ++i)
    p[i] = std::lower_bound(d.unique.begin(), d.unique.end(), ids[i]) - d.unique.begin();
  return d;
}

}  // namespace

void KgeStep::run(const TripleBatch& b, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times) const {
  Timer timer;
  const int64_t n = b.size();
  std::vector<int64_t> entity_ids;
  entity_ids.reserve(2 * n + b.negatives.size());
  entity_ids.insert(entity_ids.end(), b.head.begin(), b.head.end());
  entity_ids.insert(entity_ids.end(), b.tail.begin(), b.tail.end());
  entity_ids.insert(entity_ids.end(), b.negatives.begin(), b.negatives.end());
  const Distinct ents = distinct(entity_ids);
  const Distinct rels = distinct(b.relation);
  const torch::Tensor entity_rows = entities.pull(ents.unique).set_requires_grad(true);
  const torch::Tensor relation_rows = relations.pull(rels.unique).set_requires_grad(true);
  times->pull += timer.lap();

  const torch::Tensor gathered = entity_rows.index_select(0, ents.positions);
  const torch::Tensor h = gathered.narrow(0, 0, n), t = gathered.narrow(0, n, n);
  const torch::Tensor negatives = gathered.narrow(0, 2 * n, static_cast<int64_t>(b.negatives.size()))
                                      .view({b.num_chunks, b.negatives_per_chunk, -1});
  const torch::Tensor r = relation_rows.index_select(0, rels.positions);
  const torch::Tensor positive = score_.positive(h, r, t);
  const torch::Tensor anchor = (b.corrupt_head ? t : h).view({b.num_chunks, b.chunk_size, -1});
  const torch::Tensor negative =
      score_.negative(anchor, r.view({b.num_chunks, b.chunk_size, -1}), negatives, b.corrupt_head)
          .reshape({n, b.negatives_per_chunk});
  Loss loss = kge_loss(positive, negative, loss_);
  torch::Tensor total = loss.total;
  double penalty = 0;
  if (reg_.coefficient > 0) {
    const torch::Tensor reg = regularization({entity_rows, r}, reg_.coefficient, reg_.norm);
    penalty = reg.item<double>();
    total = total + reg;
  }
  const double loss_value = total.item<double>();
  if (!std::isfinite(loss_value)) {
    auto bad = [](const torch::Tensor& x) { return (~torch::isfinite(x.detach())).sum().item<int64_t>(); };
    fail("the loss became {} (non-finite values: {} in the entity rows, {} in the relation rows, {} positive and "
         "{} negative scores); try a smaller --lr or --gamma",
         loss_value, bad(entity_rows), bad(relation_rows), bad(positive), bad(negative));
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
