// Neighbour sampling on an in-memory CSC, and block building: sampled edges
// exist, fanouts hold, no duplicates without replacement, draws are uniform
// (or follow the weights) by a chi-square test, and samples depend only on
// the key and the seed.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "net/transport.h"
#include "tessera/sampling/block_builder.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/fanouts.h"
#include "tools/flag_types.h"
#include "tessera/sampling/neighbor_sampler.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::sampling {
namespace {

constexpr int64_t kEdgeBase = 1000;  // edge IDs are positions + kEdgeBase

// A random graph as a CSC with distinct sources per node; node 0 has degree
// 20, node 1 degree 250, node 2 none.
struct TestGraph {
  std::vector<int64_t> indptr{0}, indices, eids;
  std::vector<float> weights;  // by edge ID - kEdgeBase
  int64_t num_nodes = 500;

  TestGraph() {
    Rng rng(3);
    for (int64_t v = 0; v < num_nodes; ++v) {
      const int64_t degree = v == 0 ? 20 : v == 1 ? 250 : v == 2 ? 0 : static_cast<int64_t>(rng.below(40));
      std::set<int64_t> sources;
      while (static_cast<int64_t>(sources.size()) < degree) sources.insert(static_cast<int64_t>(rng.below(num_nodes)));
      for (const int64_t s : sources) {
        eids.push_back(kEdgeBase + static_cast<int64_t>(indices.size()));
        indices.push_back(s);
        weights.push_back(static_cast<float>(indices.size() % 4));  // 0, 1, 2, 3: a quarter are never drawn
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }
  CscView view() const {
    CscView v;
    v.indptr = indptr.data();
    v.indices = indices.data();
    v.eids = eids.data();
    v.num_nodes = num_nodes;
    return v;
  }
  int64_t degree(int64_t v) const { return indptr[v + 1] - indptr[v]; }
  // Checks that (src, eid) is an in-edge of `seed`.
  bool has_edge(int64_t seed, int64_t src, int64_t eid) const {
    const int64_t pos = eid - kEdgeBase;
    return pos >= indptr[seed] && pos < indptr[seed + 1] && indices[pos] == src;
  }
};

// Upper critical value of chi-square with `dof` degrees of freedom at
// p = 1e-4 (Wilson-Hilferty), so an honest sampler fails once in 10,000 runs.
double chi_square_critical(int dof) {
  const double z = 3.719, k = dof;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (size_t i = 0; i < observed.size(); ++i) x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x;
}

std::vector<int64_t> all_nodes(const TestGraph& g) {
  std::vector<int64_t> nodes(g.num_nodes);
  for (int64_t v = 0; v < g.num_nodes; ++v) nodes[v] = v;
  return nodes;
}

void expect_valid(const TestGraph& g, const std::vector<int64_t>& seeds, const SampledEdges& s, int64_t fanout,
                  bool replace) {
  ASSERT_EQ(s.counts.size(), seeds.size());
  size_t e = 0;
  for (size_t i = 0; i < seeds.size(); ++i) {
    const int64_t degree = g.degree(seeds[i]);
    const int64_t expected = fanout < 0 ? degree : degree == 0 ? 0 : replace ? fanout : std::min(fanout, degree);
    ASSERT_EQ(s.counts[i], expected) << "seed " << seeds[i] << " degree " << degree;
    std::set<int64_t> seen;
    for (int64_t k = 0; k < s.counts[i]; ++k, ++e) {
      ASSERT_TRUE(g.has_edge(seeds[i], s.src[e], s.eids[e])) << "seed " << seeds[i] << " edge " << s.eids[e];
      if (!replace) {
        ASSERT_TRUE(seen.insert(s.eids[e]).second) << "duplicate edge " << s.eids[e];
      }
    }
  }
  EXPECT_EQ(e, s.src.size());
  EXPECT_EQ(s.src.size(), s.eids.size());
}

TEST(Sampling, EdgesExistFanoutsHoldNoDuplicatesWithoutReplacement) {
  const TestGraph g;
  const std::vector<int64_t> seeds = all_nodes(g);
  for (const int64_t fanout : {-1, 0, 1, 5, 25, 100}) {
    for (const bool replace : {false, true}) {
      SampledEdges s;
      FanoutSpec spec;
      spec.fanout = fanout;
      spec.replace = replace;
      spec.key = 7;
      sample_in_edges(g.view(), seeds.data(), g.num_nodes, spec, &s);
      SCOPED_TRACE(::testing::Message() << "fanout " << fanout << " replace " << replace);
      expect_valid(g, seeds, s, fanout, replace && fanout >= 0);
    }
  }
}

// A fanout far above any degree (2^40) without replacement takes every
// in-edge; it once reserved the fanout's room for each seed (the request
// fuzzer's find: a server asked to allocate terabytes).
TEST(Sampling, HugeFanoutWithoutReplacementTakesEveryEdge) {
  const TestGraph g;
  const std::vector<int64_t> seeds = all_nodes(g);
  FanoutSpec spec;
  spec.fanout = int64_t{1} << 40;
  spec.key = 7;
  SampledEdges s;
  sample_in_edges(g.view(), seeds.data(), g.num_nodes, spec, &s);
  expect_valid(g, seeds, s, spec.fanout, false);
  EXPECT_EQ(static_cast<int64_t>(s.src.size()), g.indptr[g.num_nodes]);
}

// Draws `fanout` of node `seed`'s edges `trials` times and tests each
// edge's frequency against uniform.
void expect_uniform(const TestGraph& g, int64_t seed, int64_t fanout, bool replace, int trials) {
  const int64_t degree = g.degree(seed);
  std::vector<double> observed(degree, 0);
  SampledEdges s;
  for (int t = 0; t < trials; ++t) {
    s.clear();
    FanoutSpec spec;
    spec.fanout = fanout;
    spec.replace = replace;
    spec.key = 100 + t;
    sample_in_edges(g.view(), &seed, 1, spec, &s);
    for (const int64_t eid : s.eids) ++observed[eid - kEdgeBase - g.indptr[seed]];
  }
  const std::vector<double> expected(degree, static_cast<double>(trials) * fanout / degree);
  const double x = chi_square(observed, expected);
  EXPECT_LT(x, chi_square_critical(degree - 1)) << "fanout " << fanout << " of " << degree << " replace " << replace;
  EXPECT_GT(x, 0);  // not suspiciously exact either: a sampler that cycles would give 0
}

TEST(Sampling, DrawsAreUniformByChiSquare) {
  const TestGraph g;
  expect_uniform(g, 0, 5, false, 4000);    // Floyd's algorithm
  expect_uniform(g, 1, 100, false, 2000);  // partial shuffle
  expect_uniform(g, 0, 5, true, 4000);     // with replacement
}

TEST(Sampling, WeightedDrawsFollowTheWeights) {
  const TestGraph g;
  const int64_t seed = 1, degree = g.degree(seed);
  FanoutSpec spec;
  spec.weights = {{g.weights.data(), kEdgeBase}};
  // With replacement the draws are independent: frequencies follow w / sum(w).
  std::vector<double> observed(degree, 0), expected(degree, 0);
  double total = 0;
  for (int64_t j = 0; j < degree; ++j) total += g.weights[g.indptr[seed] + j];
  spec.fanout = 10;
  spec.replace = true;
  const int trials = 3000;
  SampledEdges s;
  for (int t = 0; t < trials; ++t) {
    spec.key = t;
    s.clear();
    sample_in_edges(g.view(), &seed, 1, spec, &s);
    for (const int64_t eid : s.eids) ++observed[eid - kEdgeBase - g.indptr[seed]];
  }
  std::vector<double> o, e;
  for (int64_t j = 0; j < degree; ++j) {
    const double w = g.weights[g.indptr[seed] + j];
    if (w == 0) {
      EXPECT_EQ(observed[j], 0) << "an edge of weight 0 was drawn";
      continue;
    }
    o.push_back(observed[j]);
    e.push_back(trials * 10.0 * w / total);
  }
  EXPECT_LT(chi_square(o, e), chi_square_critical(static_cast<int>(o.size()) - 1));

  // Without replacement: no zero weight, no duplicate, heavier edges more often.
  spec.replace = false;
  std::vector<double> by_weight(4, 0);
  const std::vector<int64_t> seeds = all_nodes(g);
  for (int t = 0; t < 200; ++t) {
    spec.key = t;
    s.clear();
    sample_in_edges(g.view(), seeds.data(), g.num_nodes, spec, &s);
    size_t k = 0;
    for (int64_t i = 0; i < g.num_nodes; ++i) {
      std::set<int64_t> seen;
      for (int64_t c = 0; c < s.counts[i]; ++c, ++k) {
        ASSERT_TRUE(g.has_edge(i, s.src[k], s.eids[k]));
        ASSERT_TRUE(seen.insert(s.eids[k]).second);
        const float w = g.weights[s.eids[k] - kEdgeBase];
        ASSERT_GT(w, 0);
        ++by_weight[static_cast<int>(w)];
      }
    }
  }
  EXPECT_LT(by_weight[1], by_weight[2]);
  EXPECT_LT(by_weight[2], by_weight[3]);
}

TEST(Sampling, SampleDependsOnlyOnKeyAndSeed) {
  const TestGraph g;
  FanoutSpec spec;
  spec.fanout = 4;
  spec.key = 42;
  const std::vector<int64_t> together{5, 9, 1}, alone{1};
  SampledEdges a, b, c;
  sample_in_edges(g.view(), together.data(), 3, spec, &a);
  sample_in_edges(g.view(), alone.data(), 1, spec, &b);
  // Seed 1's edges are the last a.counts[2] of a.
  const std::vector<int64_t> tail(a.eids.end() - a.counts[2], a.eids.end());
  EXPECT_EQ(tail, b.eids);
  spec.key = 43;
  sample_in_edges(g.view(), alone.data(), 1, spec, &c);
  EXPECT_NE(b.eids, c.eids);

  // A partition whose edge IDs follow CSC order needs no eids array.
  CscView implicit = g.view();
  implicit.eids = nullptr;
  implicit.first_edge = kEdgeBase;
  SampledEdges d;
  sample_in_edges(implicit, together.data(), 3, spec, &d);
  SampledEdges e;
  sample_in_edges(g.view(), together.data(), 3, spec, &e);
  EXPECT_EQ(d.eids, e.eids);
  EXPECT_EQ(d.src, e.src);
}

TEST(Sampling, SeedOutsideThePartitionIsAnError) {
  const TestGraph g;
  const int64_t seed = g.num_nodes + 3;
  SampledEdges s;
  try {
    sample_in_edges(g.view(), &seed, 1, FanoutSpec{}, &s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed 503 is not a node of partition 0"), std::string::npos) << e.what();
  }
}

TEST(Sampling, BlocksPutDestinationsFirstAndRelabelSources) {
  const TestGraph g;
  const std::vector<int64_t> dst{7, 3, 11};
  FanoutSpec spec;
  spec.fanout = 6;
  SampledEdges s;
  sample_in_edges(g.view(), dst.data(), 3, spec, &s);
  BlockBuilder builder(g.num_nodes);
  for (int round = 0; round < 2; ++round) {  // the builder's slots are reset between blocks
    const Block b = builder.build(dst, SampledEdges(s));
    EXPECT_EQ(b.num_dst, 3);
    ASSERT_EQ(std::vector<int64_t>(b.src_nodes.begin(), b.src_nodes.begin() + 3), dst);
    EXPECT_EQ(std::set<int64_t>(b.src_nodes.begin(), b.src_nodes.end()).size(), b.src_nodes.size());
    ASSERT_EQ(b.indptr.size(), 4u);
    EXPECT_EQ(b.indptr.back(), b.num_edges());
    for (int64_t d = 0; d < 3; ++d)
      for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
        ASSERT_LT(b.indices[e], b.num_src());
        EXPECT_TRUE(g.has_edge(dst[d], b.src_nodes[b.indices[e]], b.eids[e]));
      }
  }
  EXPECT_THROW(builder.build({7, 7}, SampledEdges{{0, 0}, {}, {}, {}}), Error);
}

// Per-edge-type fanouts (DGL's sample_etype_neighbors) on a graph whose
// edges carry one of 3 types, sorted by type within each node's list:
// every type gives min(fanout, its degree) edges (all with -1, none with 0),
// each sampled edge has the type of the CSC position it came from, and the
// block keeps the types.
TEST(Sampling, PerEdgeTypeFanoutsHoldPerType) {
  const TestGraph g;
  std::vector<int32_t> etypes(g.indices.size());
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    const int64_t degree = g.degree(v);
    for (int64_t j = 0; j < degree; ++j) etypes[g.indptr[v] + j] = static_cast<int32_t>(3 * j / std::max<int64_t>(degree, 1));
  }
  CscView view = g.view();
  view.etypes = etypes.data();
  FanoutSpec spec;
  spec.key = 17;
  spec.etype_fanouts = {2, 0, -1};
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < g.num_nodes; ++v) seeds.push_back(v);
  SampledEdges s;
  sample_in_edges(view, seeds.data(), static_cast<int64_t>(seeds.size()), spec, &s);
  ASSERT_EQ(s.etypes.size(), s.src.size());
  size_t e = 0;
  int64_t capped = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    int64_t degree_of[3] = {0, 0, 0};
    for (int64_t p = g.indptr[v]; p < g.indptr[v + 1]; ++p) ++degree_of[etypes[p]];
    int64_t taken_of[3] = {0, 0, 0};
    std::set<int64_t> seen;
    for (int64_t k = 0; k < s.counts[v]; ++k, ++e) {
      ASSERT_TRUE(g.has_edge(v, s.src[e], s.eids[e])) << "seed " << v;
      ASSERT_EQ(s.etypes[e], etypes[s.eids[e] - kEdgeBase]) << "seed " << v << ": edge type is not the edge's";
      ASSERT_TRUE(seen.insert(s.eids[e]).second) << "duplicate edge of seed " << v;
      ++taken_of[s.etypes[e]];
    }
    EXPECT_EQ(taken_of[0], std::min<int64_t>(2, degree_of[0])) << "seed " << v;
    EXPECT_EQ(taken_of[1], 0) << "seed " << v;
    EXPECT_EQ(taken_of[2], degree_of[2]) << "seed " << v;
    capped += degree_of[0] > 2;
  }
  EXPECT_EQ(e, s.src.size());
  EXPECT_GT(capped, 100) << "the test graph should exercise the cap";

  // Same key and seeds: same sample. The block carries the types along.
  SampledEdges again;
  sample_in_edges(view, seeds.data(), static_cast<int64_t>(seeds.size()), spec, &again);
  EXPECT_EQ(again.eids, s.eids);
  const std::vector<int32_t> types = s.etypes;
  BlockBuilder builder(g.num_nodes);
  const Block block = builder.build(seeds, std::move(s));
  EXPECT_EQ(block.etypes, types);

  // The spec survives the wire.
  const std::vector<int64_t> wire = encode_fanout(spec);
  const FanoutSpec decoded = decode_fanout(wire.data(), wire.size());
  EXPECT_EQ(decoded.etype_fanouts, spec.etype_fanouts);
  EXPECT_EQ(decoded.key, spec.key);
  EXPECT_THROW(decode_fanout(wire.data(), wire.size() - 1), net::ProtocolError);
}

TEST(Sampling, FanoutFlagParsesLikeDgl) {
  EXPECT_EQ(tools::parse_fanouts("10,25", "--fan-out").values, (std::vector<int64_t>{10, 25}));
  EXPECT_EQ(tools::parse_fanouts("-1", "--fan-out").values, (std::vector<int64_t>{-1}));
  try {
    tools::parse_fanouts("10,x", "--fan-out");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--fan-out '10,x': entry 'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tools::parse_fanouts("10,", "--fan-out"), Error);
  EXPECT_THROW(tools::parse_fanouts("-2", "--fan-out"), Error);
  // Per layer: one value stands for every layer; otherwise one per layer.
  EXPECT_EQ(Fanouts{5}.for_layers(3, "--fanout"), (std::vector<int64_t>{5, 5, 5}));
  EXPECT_EQ((Fanouts{10, 25}).for_layers(2, "--fanout"), (std::vector<int64_t>{10, 25}));
  try {
    (Fanouts{10, 25}).for_layers(3, "--fanout");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--fanout '10,25' gives 2 fanouts for 3 layers"), std::string::npos) << e.what();
  }
  EXPECT_EQ((Fanouts{10, -1}).to_string(), "10,-1");
}

}  // namespace
}  // namespace tessera::sampling
