// KvsAll (LibKGE's) against brute force on small graphs: its queries are
// every distinct (head, relation) and (relation, tail) with exactly their
// known answers, and its step's loss and gradients (the softmax
// cross-entropy of each query's target distribution, label smoothing's
// included, plus the -rc penalty) equal autograd over every entity, for
// DistMult, ComplEx and RESCAL, with and without reciprocal relations, in
// one chunk of scores or many.
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "kge/all_entities_step.h"
#include "kge_step_expectations.h"
#include "kge/kvsall_queries.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::kge {
namespace {

constexpr int64_t kEntities = 19, kRelations = 3;

// Few relations and entities so that queries share answers, and a repeated triple.
Array small_graph(uint64_t seed, int64_t n) {
  Array t = Array::zeros(DType::kInt64, {n, 3});
  Rng rng(seed, 1);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    p[3 * i] = static_cast<int64_t>(rng.below(6));
    p[3 * i + 1] = static_cast<int64_t>(rng.below(kRelations));
    p[3 * i + 2] = static_cast<int64_t>(rng.below(kEntities));
  }
  for (int j = 0; j < 3; ++j) p[3 * (n - 1) + j] = p[j];
  return t;
}

TEST(KvsAllQueries, EveryDistinctPairOnceWithExactlyItsAnswers) {
  const Array t = small_graph(4, 60);
  for (const bool reciprocal : {false, true}) {
    const KvsAllQueries q = kvsall_queries(t, kRelations, reciprocal);
    std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> tails, heads;
    const int64_t* p = t.data<int64_t>();
    for (int64_t i = 0; i < t.rows(); ++i) {
      tails[{p[3 * i], p[3 * i + 1]}].insert(p[3 * i + 2]);
      heads[{p[3 * i + 2], p[3 * i + 1]}].insert(p[3 * i]);
    }
    ASSERT_EQ(q.tail_queries, static_cast<int64_t>(tails.size()));
    ASSERT_EQ(q.size(), static_cast<int64_t>(tails.size() + heads.size()));
    ASSERT_EQ(q.queries.rows(), q.size());
    const int64_t* rows = q.queries.data<int64_t>();
    for (int64_t i = 0; i < q.size(); ++i) {
      const bool tail_query = i < q.tail_queries;
      EXPECT_EQ(rows[3 * i + 2], i);
      EXPECT_EQ(q.as_head[i] != 0, !tail_query && !reciprocal);
      const int64_t relation = rows[3 * i + 1] - (!tail_query && reciprocal ? kRelations : 0);
      auto& want = tail_query ? tails : heads;
      const auto it = want.find({rows[3 * i], relation});
      ASSERT_NE(it, want.end()) << "query " << i;
      EXPECT_EQ(std::set<int64_t>(q.answers_of(i), q.answers_of(i) + q.num_answers(i)), it->second);
      EXPECT_EQ(q.num_answers(i), static_cast<int64_t>(it->second.size()));  // each answer once
      want.erase(it);                                                        // each pair once
    }
  }
  EXPECT_THROW(kvsall_queries(Array::zeros(DType::kInt64, {0, 3}), kRelations, false), Error);
}

// The loss by autograd: each query scored against every entity through
// ScoreFunction::negative, the cross-entropy of its target distribution
// (LibKGE's labels (1 - ls) [answer] + 1 / entities, normalised), averaged,
// plus the penalty as the step defines it (the queries' anchors and answers
// once each, each query's relation row; weighted: each row by its share of
// those uses).
double autograd_loss(const ScoreOptions& model, const Regularization& reg, const KvsAllQueries& q,
                     const std::vector<int64_t>& batch, double smoothing, const torch::Tensor& e,
                     const torch::Tensor& r, torch::Tensor* entity_grad, torch::Tensor* relation_grad) {
  const auto score = make_score_function(model);
  const torch::Tensor E = e.clone().set_requires_grad(true), R = r.clone().set_requires_grad(true);
  const int64_t* rows = q.queries.data<int64_t>();
  torch::Tensor loss = torch::zeros({}, torch::kFloat64);
  std::map<int64_t, int64_t> uses;  // entity -> its uses as an anchor or an answer
  torch::Tensor relation_penalty = torch::zeros({});
  const double relation_weight = reg.weighted ? 1.0 / static_cast<double>(batch.size()) : 1.0;
  for (const int64_t id : batch) {
    const int64_t anchor = rows[3 * id], relation = rows[3 * id + 1];
    const torch::Tensor s = score->negative(E[anchor].view({1, 1, -1}), R[relation].view({1, 1, -1}),
                                            E.unsqueeze(0), q.as_head[id] != 0)
                                .view({-1});
    torch::Tensor y = torch::zeros({kEntities});
    for (int64_t k = 0; k < q.num_answers(id); ++k) y[q.answers_of(id)[k]] = 1.0;
    if (smoothing > 0) y = (1 - smoothing) * y + 1.0 / kEntities;
    y = y / y.sum();
    loss = loss - (y * torch::log_softmax(s, 0)).sum().to(torch::kFloat64);
    ++uses[anchor];
    for (int64_t k = 0; k < q.num_answers(id); ++k) ++uses[q.answers_of(id)[k]];
    relation_penalty = relation_penalty + relation_weight * R[relation].abs().pow(reg.norm).sum();
  }
  loss = loss / static_cast<double>(batch.size());
  if (reg.coefficient > 0) {
    int64_t total = 0;
    for (const auto& [id, count] : uses) total += count;
    torch::Tensor entity_penalty = torch::zeros({});
    for (const auto& [id, count] : uses)
      entity_penalty = entity_penalty + (reg.weighted ? static_cast<double>(count) / static_cast<double>(total) : 1.0) *
                                            E[id].abs().pow(reg.norm).sum();
    loss = loss + reg.coefficient * entity_penalty + reg.relation() * relation_penalty;
  }
  loss.backward();
  *entity_grad = E.grad();
  *relation_grad = R.grad();
  return loss.item<double>();
}

TEST(KgeKvsAll, LossAndGradientsMatchAutogradOverEveryEntity) {
  const Array t = small_graph(7, 40);
  for (const Model kind : {Model::kDistMult, Model::kComplEx, Model::kRESCAL})
    for (const bool reciprocal : {false, true})
      for (const double smoothing : {0.0, 0.2})
        for (const Regularization reg :
             {Regularization{0, 3}, Regularization{0.01, 3, 0.03}, Regularization{0.2, 2, 0.3, true}})
          for (const int64_t chunk : {int64_t{3}, int64_t{32}}) {
            SCOPED_TRACE(model_name(kind) + (reciprocal ? " reciprocal" : "") + " ls " + std::to_string(smoothing) +
                         " rc " + std::to_string(reg.coefficient) + (reg.weighted ? " weighted" : "") + " chunk " +
                         std::to_string(chunk));
            const KvsAllQueries q = kvsall_queries(t, kRelations, reciprocal);
            // Tail and head queries mixed, and at least one with several answers.
            std::vector<int64_t> batch;
            for (int64_t i = 0; i < q.size(); i += 3) batch.push_back(i);
            int64_t most = 0;
            for (const int64_t id : batch) most = std::max(most, q.num_answers(id));
            ASSERT_GT(most, 1);
            ASSERT_GT(batch.back(), q.tail_queries);
            sampling::TripleBatch b;
            const int64_t* rows = q.queries.data<int64_t>();
            for (const int64_t id : batch) {
              b.head.push_back(rows[3 * id]);
              b.relation.push_back(rows[3 * id + 1]);
              b.tail.push_back(rows[3 * id + 2]);
            }

            const ScoreOptions model{kind, 6, 0.0, false, false};
            torch::manual_seed(17);
            const torch::Tensor e = torch::randn({kEntities, 6}) * 0.7;
            const int64_t relation_dim = make_score_function(model)->relation_dim();
            const torch::Tensor r = torch::randn({kRelations * (reciprocal ? 2 : 1), relation_dim}) * 0.7;
            AllEntitiesStep step(model, reg, kRelations, reciprocal, chunk, {}, MultiLabel{&q, smoothing});
            torch::Tensor ge = torch::empty_like(e), gr = torch::empty_like(r), want_e, want_r;
            double cross_entropy = 0;
            const double loss = step.loss_and_gradients(b, e, r, &ge, &gr, &cross_entropy);
            const double want = autograd_loss(model, reg, q, batch, smoothing, e, r, &want_e, &want_r);
            expect_step_matches_autograd(loss, cross_entropy, want, reg.coefficient > 0, ge, want_e, gr, want_r);
          }
}

TEST(KgeKvsAll, BadSmoothingAndQueriesAreRefused) {
  const Array t = small_graph(2, 20);
  const KvsAllQueries q = kvsall_queries(t, kRelations, true);
  const ScoreOptions model{Model::kComplEx, 6, 0.0, false, false};
  EXPECT_THROW(AllEntitiesStep(model, {}, kRelations, true, 4, {}, MultiLabel{&q, 1.0}), Error);
  EXPECT_THROW(AllEntitiesStep(model, {}, kRelations, true, 4, {}, MultiLabel{nullptr, 0.1}), Error);  // 1vsAll
  AllEntitiesStep step(model, {}, kRelations, true, 4, {}, MultiLabel{&q, 0});
  sampling::TripleBatch b;
  b.head = {0};
  b.relation = {0};
  b.tail = {q.size()};  // one past the last query
  const torch::Tensor e = torch::zeros({kEntities, 6}), r = torch::zeros({2 * kRelations, 6});
  torch::Tensor ge = torch::empty_like(e), gr = torch::empty_like(r);
  double ce = 0;
  EXPECT_THROW(step.loss_and_gradients(b, e, r, &ge, &gr, &ce), Error);
}

}  // namespace
}  // namespace tessera::kge
