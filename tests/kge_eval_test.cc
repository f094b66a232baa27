// The pieces of KGE training and evaluation below the command line: chunked
// negative sampling, the filtered ranks against a brute-force count, and one
// training step moving exactly the rows it used.
#include <torch/torch.h>

#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "kge/kge_step.h"
#include "kge/ranker.h"
#include "sampling/triple_sampler.h"
#include "tessera/kge/knowledge_graph.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

Array random_triples(int64_t n, int64_t entities, int64_t relations, uint64_t seed) {
  Rng rng(seed);
  Array a = Array::zeros(DType::kInt64, {n, 3});
  int64_t* p = a.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    p[3 * i] = rng.below(entities);
    p[3 * i + 1] = rng.below(relations);
    p[3 * i + 2] = rng.below(entities);
  }
  return a;
}

TEST(KgeSampler, ChunksShareNegativesAndCorruptionAlternates) {
  const Array triples = random_triples(1000, 50, 5, 1);
  sampling::TripleSamplerOptions o{64, 16, 8, false, 50};
  sampling::TripleSampler sampler(triples, o, 3, 0);
  std::set<std::vector<int64_t>> seen;
  sampling::TripleBatch b;
  for (int call = 0; call < 4; ++call) {
    sampler.next(&b);
    EXPECT_EQ(b.corrupt_head, call % 2 == 1);  // tails first
    EXPECT_EQ(b.size(), 64);
    EXPECT_EQ(b.num_chunks, 8);
    EXPECT_EQ(b.chunk_size, 8);
    EXPECT_EQ(b.negatives_per_chunk, 16);
    ASSERT_EQ(b.negatives.size(), 8u * 16u);
    for (int64_t e : b.negatives) EXPECT_TRUE(e >= 0 && e < 50);
  }
  // One pass visits every triple once: 1000 triples in 15.6 batches of 64.
  sampling::TripleSampler pass(triples, {100, 4, -1, false, 50}, 5, 0);
  std::multiset<std::vector<int64_t>> drawn, all;
  for (int64_t i = 0; i < 1000; ++i) all.insert({triple(triples, i)[0], triple(triples, i)[1], triple(triples, i)[2]});
  for (int k = 0; k < 10; ++k) {
    pass.next(&b);
    for (int64_t i = 0; i < b.size(); ++i) drawn.insert({b.head[i], b.relation[i], b.tail[i]});
  }
  EXPECT_EQ(drawn, all);
}

TEST(KgeSampler, DegreeSamplingDoublesNegativesFromTheCorruptedEnd) {
  // Every tail is entity 7 and every head entity 3: degree negatives of a
  // tail-corrupting batch are all 7, of a head-corrupting batch all 3.
  Array triples = Array::zeros(DType::kInt64, {20, 3});
  for (int64_t i = 0; i < 20; ++i) {
    triples.data<int64_t>()[3 * i] = 3;
    triples.data<int64_t>()[3 * i + 2] = 7;
  }
  sampling::TripleSampler sampler(triples, {10, 5, -1, true, 100}, 1, 0);
  sampling::TripleBatch b;
  for (int64_t expected : {7, 3}) {
    sampler.next(&b);
    ASSERT_EQ(b.negatives_per_chunk, 10);
    for (int64_t c = 0; c < b.num_chunks; ++c)
      for (int64_t k = 5; k < 10; ++k) EXPECT_EQ(b.negatives[c * 10 + k], expected);
  }
}

TEST(KgeSampler, BadSizesAreClearErrors) {
  auto message = [](sampling::TripleSamplerOptions o) {
    try {
      sampling::validate(o);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({1000, 256, -1, false, 10}).find("multiple of the negative chunk size 256"), std::string::npos);
  EXPECT_NE(message({0, 256, -1, false, 10}).find("--batch_size"), std::string::npos);
  EXPECT_NE(message({10, 0, -1, false, 10}).find("--neg_sample_size"), std::string::npos);
}

// The rank of each test triple counted pair by pair with positive().
std::vector<int64_t> brute_force_ranks(const Array& test, const torch::Tensor& ent, const torch::Tensor& rel,
                                       const ScoreFunction& score, const std::set<std::vector<int64_t>>& known,
                                       bool head_query) {
  std::vector<int64_t> ranks;
  for (int64_t i = 0; i < test.rows(); ++i) {
    const int64_t* t = triple(test, i);
    auto s = [&](int64_t h, int64_t tail) {
      return score.positive(ent[h].unsqueeze(0), rel[t[1]].unsqueeze(0), ent[tail].unsqueeze(0)).item<float>();
    };
    const float truth = s(t[0], t[2]);
    int64_t rank = 1;
    for (int64_t e = 0; e < ent.size(0); ++e) {
      const int64_t h = head_query ? e : t[0], tail = head_query ? t[2] : e;
      if (e == (head_query ? t[0] : t[2]) || known.count({h, t[1], tail})) continue;
      if (s(h, tail) >= truth - 1e-5f) ++rank;
    }
    ranks.push_back(rank);
  }
  return ranks;
}

TEST(KgeRanker, FilteredRanksMatchABruteForceCount) {
  torch::manual_seed(0);
  const int64_t entities = 40, relations = 3;
  const Array train = random_triples(200, entities, relations, 1);
  const Array test = random_triples(15, entities, relations, 2);
  const KnownTriples known({&train, &test});
  std::set<std::vector<int64_t>> known_set;
  for (const Array* a : {&train, &test})
    for (int64_t i = 0; i < a->rows(); ++i) known_set.insert({triple(*a, i)[0], triple(*a, i)[1], triple(*a, i)[2]});
  for (const char* model : {"DistMult", "TransE_l1", "RotatE"}) {
    ScoreOptions so{parse_model(model), 8, 4.0, std::string(model) == "RotatE", false};
    const auto score = make_score_function(so);
    const torch::Tensor ent = torch::randn({entities, score->entity_dim()});
    const torch::Tensor rel = torch::randn({relations, score->relation_dim()});
    RankSums expected;
    for (bool head_query : {false, true})
      for (int64_t r : brute_force_ranks(test, ent, rel, *score, known_set, head_query)) expected.add(r);
    const RankSums got = rank_triples(test, 0, test.rows(), ent, rel, *score, &known, {true, -1, 8, 0});
    EXPECT_EQ(got.count, 30) << model;
    EXPECT_NEAR(got.rank, expected.rank, 1e-9) << model;
    EXPECT_NEAR(got.reciprocal, expected.reciprocal, 1e-9) << model;
    EXPECT_NEAR(got.hits10, expected.hits10, 1e-9) << model;
    // Unfiltered ranks can only be worse.
    const RankSums raw = rank_triples(test, 0, test.rows(), ent, rel, *score, &known, {false, -1, 8, 0});
    EXPECT_GE(raw.rank, got.rank) << model;
  }
}

TEST(KgeRanker, SampledCandidatesRankWithinTheSampleSize) {
  torch::manual_seed(1);
  const Array train = random_triples(100, 30, 2, 3);
  const Array test = random_triples(10, 30, 2, 4);
  const KnownTriples known({&train, &test});
  const auto score = make_score_function({Model::kDistMult, 6, 12.0, false, false});
  const RankSums s = rank_triples(test, 0, test.rows(), torch::randn({30, 6}), torch::randn({2, 6}), *score, &known,
                                  {true, 5, 4, 0});
  EXPECT_EQ(s.count, 20);
  EXPECT_LE(s.rank, 20 * 6);  // at most 5 candidates rank above
  EXPECT_GE(s.rank, 20);
}

TEST(KgeStep, OneStepMovesExactlyTheRowsItUsed) {
  const ScoreOptions model{Model::kTransE_l2, 4, 6.0, false, false};
  const auto score = make_score_function(model);
  LocalTable entities("e", 100, 4, uniform_init(0.5, 1), 0.1);
  LocalTable relations("r", 5, 4, uniform_init(0.5, 2), 0.1);
  const torch::Tensor entities_before = entities.read_all(), relations_before = relations.read_all();
  sampling::TripleBatch b;
  b.head = {1, 2, 3, 4};
  b.relation = {0, 0, 2, 2};
  b.tail = {5, 6, 7, 8};
  b.negatives = {10, 11, 12, 13};
  b.num_chunks = 2;
  b.chunk_size = 2;
  b.negatives_per_chunk = 2;
  StepTimes times;
  KgeStep step(model, *score, LossOptions{}, {0, 3});
  ASSERT_TRUE(step.fused());
  step.run(b, entities, relations, &times);
  EXPECT_EQ(times.steps, 1);
  EXPECT_GT(times.loss, 0);
  const torch::Tensor moved = (entities.read_all() - entities_before).abs().sum(1) > 0;
  for (int64_t e = 0; e < 100; ++e) {
    const bool used = (e >= 1 && e <= 8) || (e >= 10 && e <= 13);
    EXPECT_EQ(moved[e].item<bool>(), used) << "entity " << e;
  }
  const torch::Tensor rel_moved = (relations.read_all() - relations_before).abs().sum(1) > 0;
  for (int64_t r = 0; r < 5; ++r) EXPECT_EQ(rel_moved[r].item<bool>(), r == 0 || r == 2) << "relation " << r;
  // Row-wise Adagrad: one accumulator per touched row, zero elsewhere.
  const torch::Tensor state = entities.read_state();
  EXPECT_GT(state[1].item<float>(), 0);
  EXPECT_EQ(state[0].item<float>(), 0);
}

}  // namespace
}  // namespace tessera::kge
