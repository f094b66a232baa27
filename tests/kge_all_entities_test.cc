// The 1vsAll step (every entity a candidate, softmax cross-entropy) against
// brute force on a small graph: its loss and gradients, written by hand over
// chunked GEMMs, must equal autograd through the score functions' own
// definitions, for DistMult, ComplEx and RESCAL, with and without reciprocal
// relations and the -rc penalty, in one chunk of scores or many. And the
// ranker's reciprocal mode: a head ranks as the tail of its inverse
// relation, counted candidate by candidate.
#include <torch/torch.h>

#include <gtest/gtest.h>

#include "kge/all_entities_step.h"
#include "kge_step_expectations.h"
#include "kge/ranker.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::kge {
namespace {

constexpr int64_t kEntities = 23, kRelations = 4;

sampling::TripleBatch positives(uint64_t seed) {
  Rng rng(seed, 5);
  sampling::TripleBatch b;
  for (int i = 0; i < 7; ++i) {
    b.head.push_back(static_cast<int64_t>(rng.below(kEntities)));
    b.relation.push_back(static_cast<int64_t>(rng.below(kRelations)));
    b.tail.push_back(static_cast<int64_t>(rng.below(kEntities)));
  }
  b.tail[2] = b.head[2];      // a self-loop
  b.head[4] = b.head[0];      // an entity used twice
  b.relation[5] = b.relation[1];
  return b;
}

torch::Tensor ids(const std::vector<int64_t>& v) {
  return torch::tensor(std::vector<int64_t>(v.begin(), v.end()), torch::kInt64);
}

// Dropout's masks as the step applied them (undefined: none): each query's
// anchor and relation row, query i < n the tail query of positive i, n + i
// its head query; and the candidate table's.
struct Masks {
  torch::Tensor anchors, relations, candidates;
};

torch::Tensor masked(const torch::Tensor& x, const torch::Tensor& mask) { return mask.defined() ? x * mask : x; }

// The loss by autograd: each end of each positive scored against every
// entity through ScoreFunction::negative, cross-entropy, the penalty as
// the step defines it (distinct entities once, relation rows per use, on
// the rows themselves, not their dropped copies).
double autograd_loss(const ScoreOptions& model, const Regularization& reg, bool reciprocal,
                     const sampling::TripleBatch& b, const torch::Tensor& e, const torch::Tensor& r,
                     torch::Tensor* entity_grad, torch::Tensor* relation_grad, const Masks& masks = {}) {
  const auto score = make_score_function(model);
  const torch::Tensor E = e.clone().set_requires_grad(true), R = r.clone().set_requires_grad(true);
  const torch::Tensor h = ids(b.head), rel = ids(b.relation), t = ids(b.tail);
  const torch::Tensor inverse = reciprocal ? rel + kRelations : rel;
  const int64_t n = b.size();
  const torch::Tensor anchors = masked(E.index_select(0, torch::cat({h, t})), masks.anchors);
  const torch::Tensor rows = masked(R.index_select(0, torch::cat({rel, inverse})), masks.relations);
  const torch::Tensor candidates = masked(E, masks.candidates).unsqueeze(0);
  const torch::Tensor tails =
      score->negative(anchors.narrow(0, 0, n).unsqueeze(0), rows.narrow(0, 0, n).unsqueeze(0), candidates, false)[0];
  const torch::Tensor heads = score->negative(anchors.narrow(0, n, n).unsqueeze(0), rows.narrow(0, n, n).unsqueeze(0),
                                              candidates, !reciprocal)[0];
  torch::Tensor loss = torch::nn::functional::cross_entropy(torch::cat({tails, heads}), torch::cat({t, h}));
  if (reg.coefficient > 0) {
    // Weighted: each distinct entity by its uses among the 2n heads and tails, each relation row by 1 / its uses.
    const auto [used, inverse_index, counts] = torch::_unique2(torch::cat({h, t}), true, false, true);
    const torch::Tensor entity_weight = reg.weighted ? counts.to(torch::kFloat32) / (2.0 * n) : torch::ones({used.size(0)});
    torch::Tensor penalty = R.index_select(0, rel).abs().pow(reg.norm).sum();
    if (reciprocal) penalty = penalty + R.index_select(0, inverse).abs().pow(reg.norm).sum();
    if (reg.weighted) penalty = penalty / static_cast<double>(reciprocal ? 2 * n : n);
    loss = loss + reg.coefficient * (E.index_select(0, used).abs().pow(reg.norm).sum(1) * entity_weight).sum() +
           reg.relation() * penalty;
  }
  loss.backward();
  *entity_grad = E.grad();
  *relation_grad = R.grad();
  return loss.item<double>();
}

// A draw's mask over `count` rows of `width` (row i from query_draw(draw, i, width)), or one mask of the whole
// `count x width` block: 0 where dropped, 1 / (1 - p) where kept.
torch::Tensor mask_of(const nn::detail::DropoutDraw& draw, int64_t count, int64_t width, bool per_row) {
  const torch::Tensor ones = torch::ones({count, width});
  torch::Tensor mask = torch::empty_like(ones);
  if (!per_row) nn::detail::dropout_forward(ones.data_ptr<float>(), count * width, draw, mask.data_ptr<float>());
  for (int64_t i = 0; per_row && i < count; ++i)
    nn::detail::dropout_forward(ones.data_ptr<float>(), width, query_draw(draw, i, width), mask[i].data_ptr<float>());
  return mask;
}

TEST(KgeOneVsAll, LossAndGradientsMatchAutogradOverEveryEntity) {
  for (const Model kind : {Model::kDistMult, Model::kComplEx, Model::kRESCAL})
    for (const bool reciprocal : {false, true})
      for (const Regularization reg :
           {Regularization{0, 3}, Regularization{0.01, 3}, Regularization{0.02, 2}, Regularization{0.004, 3, 0.03},
            Regularization{0.3, 2, 0.2, true}})
        for (const int64_t chunk : {int64_t{3}, int64_t{14}}) {
          SCOPED_TRACE(model_name(kind) + (reciprocal ? " reciprocal" : "") + " rc " + std::to_string(reg.coefficient) +
                       (reg.weighted ? " weighted" : "") + " chunk " + std::to_string(chunk));
          const ScoreOptions model{kind, 6, 0.0, false, false};
          torch::manual_seed(11);
          const torch::Tensor e = torch::randn({kEntities, 6}) * 0.7;
          const int64_t relation_dim = make_score_function(model)->relation_dim();
          const torch::Tensor r = torch::randn({kRelations * (reciprocal ? 2 : 1), relation_dim}) * 0.7;
          const sampling::TripleBatch b = positives(3);
          AllEntitiesStep step(model, reg, kRelations, reciprocal, chunk);
          torch::Tensor ge = torch::empty_like(e), gr = torch::empty_like(r), want_e, want_r;
          double cross_entropy = 0;
          const double loss = step.loss_and_gradients(b, e, r, &ge, &gr, &cross_entropy);
          const double want = autograd_loss(model, reg, reciprocal, b, e, r, &want_e, &want_r);
          expect_step_matches_autograd(loss, cross_entropy, want, reg.coefficient > 0, ge, want_e, gr, want_r);
        }
}

TEST(KgeOneVsAll, DropoutMatchesAutogradThroughTheStepsOwnMasks) {
  for (const Model kind : {Model::kDistMult, Model::kComplEx, Model::kRESCAL})
    for (const bool reciprocal : {false, true})
      for (const EmbeddingDropout dropout :
           {EmbeddingDropout{0.3, 0}, EmbeddingDropout{0, 0.4}, EmbeddingDropout{0.25, 0.5}}) {
        SCOPED_TRACE(model_name(kind) + (reciprocal ? " reciprocal" : "") + " entity " +
                     std::to_string(dropout.entity) + " relation " + std::to_string(dropout.relation));
        const ScoreOptions model{kind, 8, 0.0, false, false};
        const Regularization reg{0.01, 3};
        torch::manual_seed(13);
        const torch::Tensor e = torch::randn({kEntities, 8}) * 0.7;
        const int64_t relation_dim = make_score_function(model)->relation_dim();
        const torch::Tensor r = torch::randn({kRelations * (reciprocal ? 2 : 1), relation_dim}) * 0.7;
        const sampling::TripleBatch b = positives(4);
        AllEntitiesStep step(model, reg, kRelations, reciprocal, 5, dropout);
        torch::Tensor ge = torch::empty_like(e), gr = torch::empty_like(r), want_e, want_r;
        double cross_entropy = 0;
        const double loss = step.loss_and_gradients(b, e, r, &ge, &gr, &cross_entropy);
        const StepDraws& d = step.last_draws();
        const int64_t queries = 2 * b.size();
        Masks masks;
        if (dropout.entity > 0) {
          masks.anchors = mask_of(d.anchors, queries, 8, true);
          masks.candidates = mask_of(d.candidates, kEntities, 8, false);
          // Some elements dropped, not all, and the anchors' masks differ between queries.
          EXPECT_GT((masks.candidates == 0).sum().item<int64_t>(), 0);
          EXPECT_GT((masks.candidates > 0).sum().item<int64_t>(), 0);
          EXPECT_FALSE(masks.anchors[0].equal(masks.anchors[1]));
        }
        if (dropout.relation > 0) masks.relations = mask_of(d.relations, queries, relation_dim, true);
        const double want = autograd_loss(model, reg, reciprocal, b, e, r, &want_e, &want_r, masks);
        EXPECT_NEAR(loss, want, 1e-5 * std::max(1.0, std::abs(want)));
        EXPECT_LT((ge - want_e).abs().max().item<float>(), 1e-5f);
        EXPECT_LT((gr - want_r).abs().max().item<float>(), 1e-5f);
        // Not the loss without dropout: the masks were applied.
        torch::Tensor plain_e, plain_r;
        EXPECT_GT(std::abs(loss - autograd_loss(model, reg, reciprocal, b, e, r, &plain_e, &plain_r)), 1e-4);
      }
}

TEST(KgeOneVsAll, DropoutDropsItsShareOfTheTable) {
  for (const double p : {0.05, 0.44}) {
    const nn::detail::DropoutDraw draw = nn::detail::DropoutDraw::from_generator(p);
    torch::Tensor mask = mask_of(draw, 1000, 100, false);
    EXPECT_NEAR((mask == 0).to(torch::kFloat64).mean().item<double>(), p, 0.005);
    mask = mask_of(draw, 1000, 100, true);  // per row: one stream over the rows
    EXPECT_NEAR((mask == 0).to(torch::kFloat64).mean().item<double>(), p, 0.005);
  }
  EXPECT_THROW(AllEntitiesStep({Model::kComplEx, 8, 0.0, false, false}, {}, kRelations, false, 5, {1.0, 0}),
               Error);
}

TEST(KgeOneVsAll, ModelsWithoutAProductScoreAndBadChunksAreRefused) {
  EXPECT_NE(all_entities_refusal({Model::kTransE_l2, 8, 12.0, false, false}, 1).find("negative_sampling"),
            std::string::npos);
  EXPECT_NE(all_entities_refusal({Model::kRotatE, 8, 12.0, true, false}, 1).find("negative_sampling"),
            std::string::npos);
  EXPECT_NE(all_entities_refusal({Model::kComplEx, 8, 0.0, false, false}, 2).find("--num_proc 2"),
            std::string::npos);
  EXPECT_EQ(all_entities_refusal({Model::kComplEx, 8, 0.0, false, false}, 1), "");
  // 1,000 entities x 64 wide: the gradient alone takes 256,000 bytes.
  // A batch of 512 positives asks 1,024 queries in 1vsAll.
  EXPECT_EQ(all_entities_chunk_rows(1000, 64, 1024, 256000), 0);
  EXPECT_EQ(all_entities_chunk_rows(1000, 64, 1024, 256000 + 4000 * 15), 0);  // 15 queries: below the smallest chunk
  EXPECT_EQ(all_entities_chunk_rows(1000, 64, 1024, 256000 + 4000 * 100), 100);
  EXPECT_EQ(all_entities_chunk_rows(1000, 64, 1024, int64_t{1} << 30), 1024);  // the whole batch, both ends
  EXPECT_EQ(all_entities_chunk_rows(1000, 64, 8, 256000 + 4000 * 8), 8);       // a batch smaller than a chunk
}

TEST(KgeOneVsAll, ReciprocalRankingScoresHeadsWithTheInverseRows) {
  const ScoreOptions model{Model::kComplEx, 6, 0.0, false, false};
  const auto score = make_score_function(model);
  torch::manual_seed(5);
  const torch::Tensor e = torch::randn({kEntities, 6}), r = torch::randn({2 * kRelations, 6});
  Array triples = Array::zeros(DType::kInt64, {9, 3});
  Rng rng(2, 2);
  for (int64_t i = 0; i < 27; ++i)
    triples.data<int64_t>()[i] = static_cast<int64_t>(rng.below(i % 3 == 1 ? kRelations : kEntities));
  const KnownTriples known({&triples});
  RankOptions o;
  o.inverse_relations = kRelations;
  const RankSums got = rank_triples(triples, 0, triples.rows(), e, r, *score, &known, o);
  RankSums want;
  const int64_t* t = triples.data<int64_t>();
  for (int64_t i = 0; i < triples.rows(); ++i)
    for (const bool head : {false, true}) {
      const int64_t anchor = head ? t[3 * i + 2] : t[3 * i], answer = head ? t[3 * i] : t[3 * i + 2];
      const int64_t row = t[3 * i + 1] + (head ? kRelations : 0);
      auto s = [&](int64_t candidate) {
        return score->positive(e[anchor].unsqueeze(0), r[row].unsqueeze(0), e[candidate].unsqueeze(0)).item<float>();
      };
      const float truth = s(answer);
      int64_t rank = 1;
      for (int64_t c = 0; c < kEntities; ++c)
        if (c != answer && !known.contains(head, anchor, t[3 * i + 1], c) && s(c) >= truth) ++rank;
      want.add(rank);
    }
  EXPECT_EQ(got.count, want.count);
  EXPECT_NEAR(got.reciprocal, want.reciprocal, 1e-6);
  EXPECT_NEAR(got.rank, want.rank, 1e-9);
}

}  // namespace
}  // namespace tessera::kge
