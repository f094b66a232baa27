// Generators: determinism, graph shape, and that products-like carries the
// signal a GNN needs (neighbours help where own features are not enough).
#include <cmath>
#include <cstring>
#include <set>

#include "tessera/gen/generators.h"
#include "tessera/base/error.h"
#include "test_util.h"

namespace tessera {
namespace {

GenOptions opts(const std::string& kind, int64_t n, int64_t m, uint64_t seed) {
  GenOptions o;
  o.kind = kind;
  o.nodes = n;
  o.edges = m;
  o.seed = seed;
  o.feat_dim = 32;
  return o;
}

bool same_edges(const Dataset& a, const Dataset& b) {
  const auto& x = a.edge_types[0];
  const auto& y = b.edge_types[0];
  return x.count() == y.count() && !std::memcmp(x.src.raw(), y.src.raw(), x.src.nbytes()) &&
         !std::memcmp(x.dst.raw(), y.dst.raw(), x.dst.nbytes());
}

TEST(Generators, DeterministicBySeed) {
  for (const char* kind : {"rmat", "products-like", "mag-like", "kg"}) {
    const Dataset a = generate(opts(kind, 3000, 30000, 1));
    const Dataset b = generate(opts(kind, 3000, 30000, 1));
    const Dataset c = generate(opts(kind, 3000, 30000, 2));
    EXPECT_TRUE(same_edges(a, b)) << kind;
    EXPECT_FALSE(same_edges(a, c)) << kind;
  }
}

TEST(Generators, RmatIsSimpleAndSymmetric) {
  GenOptions o = opts("rmat", 10000, 100000, 5);
  o.symmetric = true;
  const Dataset d = generate(o);
  const EdgeType& e = d.edge_types[0];
  ASSERT_EQ(e.count(), 100000);
  std::set<std::pair<int64_t, int64_t>> edges;
  for (int64_t i = 0; i < e.count(); ++i) {
    const int64_t u = e.src.data<int64_t>()[i], v = e.dst.data<int64_t>()[i];
    EXPECT_NE(u, v);
    EXPECT_TRUE(edges.emplace(u, v).second) << "duplicate edge " << u << "->" << v;
  }
  for (const auto& [u, v] : edges) ASSERT_TRUE(edges.count({v, u})) << "missing reverse of " << u << "->" << v;
  // Power-law: the busiest node has far more than the mean degree (20).
  std::vector<int64_t> degree(10000, 0);
  for (const auto& [u, v] : edges) ++degree[v];
  EXPECT_GT(*std::max_element(degree.begin(), degree.end()), 200);
}

TEST(Generators, MagLikeHasOgbnMagShape) {
  const Dataset d = generate(opts("mag-like", 19397, 211110, 1));
  ASSERT_EQ(d.node_types.size(), 4u);
  EXPECT_EQ(d.node_types[3].name, "paper");
  EXPECT_NEAR(d.node_type("paper").count, 7364, 20);
  EXPECT_NEAR(d.node_type("author").count, 11346, 20);
  EXPECT_TRUE(d.node_type("author").data.empty());  // featureless, like ogbn-mag
  EXPECT_EQ(d.node_type("paper").data.at("feat").dim(1), 32);
  std::set<std::string> etypes;
  for (const auto& e : d.edge_types) etypes.insert(e.canonical());
  EXPECT_EQ(etypes, (std::set<std::string>{"author:affiliated_with:institution", "author:writes:paper",
                                            "paper:cites:paper", "paper:has_topic:field_of_study"}));
  const auto& p = d.node_type("paper");
  const double train_frac = static_cast<double>(p.train.numel()) / p.count;
  EXPECT_NEAR(train_frac, 0.855, 0.03);
}

// Nearest-centroid accuracy of features, with and without averaging over
// in-neighbours: a crude stand-in for MLP vs GNN that needs no training.
double centroid_accuracy(const Dataset& d, bool with_neighbours) {
  const NodeType& t = d.node_types[0];
  const int64_t n = t.count, f = t.data.at("feat").dim(1);
  const float* x = t.data.at("feat").data<float>();
  const int64_t* y = t.data.at("label").data<int64_t>();
  std::vector<double> h(x, x + n * f);
  if (with_neighbours) {
    std::vector<double> deg(n, 1.0);
    const auto& e = d.edge_types[0];
    for (int64_t i = 0; i < e.count(); ++i) {
      const int64_t u = e.src.data<int64_t>()[i], v = e.dst.data<int64_t>()[i];
      for (int64_t j = 0; j < f; ++j) h[v * f + j] += x[u * f + j];
      deg[v] += 1;
    }
    for (int64_t v = 0; v < n; ++v)
      for (int64_t j = 0; j < f; ++j) h[v * f + j] /= deg[v];
  }
  const int64_t classes = *std::max_element(y, y + n) + 1;
  std::vector<double> centroid(classes * f, 0.0), count(classes, 0.0);
  for (int64_t v = 0; v < n / 2; ++v) {  // fit on the first half
    for (int64_t j = 0; j < f; ++j) centroid[y[v] * f + j] += h[v * f + j];
    count[y[v]] += 1;
  }
  for (int64_t c = 0; c < classes; ++c)
    for (int64_t j = 0; j < f; ++j) centroid[c * f + j] /= std::max(count[c], 1.0);
  int64_t correct = 0;
  for (int64_t v = n / 2; v < n; ++v) {  // score on the second half
    int64_t best = 0;
    double best_d = 1e300;
    for (int64_t c = 0; c < classes; ++c) {
      double dist = 0;
      for (int64_t j = 0; j < f; ++j) dist += (h[v * f + j] - centroid[c * f + j]) * (h[v * f + j] - centroid[c * f + j]);
      if (dist < best_d) best_d = dist, best = c;
    }
    correct += best == y[v];
  }
  return static_cast<double>(correct) / (n - n / 2);
}

TEST(Generators, ProductsLikeNeedsNeighboursToClassify) {
  GenOptions o = opts("products-like", 20000, 500000, 3);
  o.feat_dim = 100;
  const Dataset d = generate(o);
  const double own = centroid_accuracy(d, false);
  const double with_neighbours = centroid_accuracy(d, true);
  EXPECT_LT(own, 0.75) << "features alone should not be enough";
  EXPECT_GT(with_neighbours, own + 0.15) << "own " << own << " with neighbours " << with_neighbours;
}

TEST(Generators, RejectsBadRequests) {
  EXPECT_THROW(generate(opts("nope", 10, 10, 0)), Error);
  EXPECT_THROW(generate(opts("rmat", 4, 100, 0)), Error);  // too dense to be simple
  GenOptions odd = opts("products-like", 100, 101, 0);
  EXPECT_THROW(generate(odd), Error);
}

}  // namespace
}  // namespace tessera
