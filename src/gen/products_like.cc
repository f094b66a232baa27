// A homogeneous graph shaped like ogbn-products: power-law degrees, planted
// classes with homophilous edges, and features too noisy to classify alone,
// so a GNN (which averages same-class neighbours) clearly beats an MLP.
#include "gen_common.h"
#include "tessera/gen/generators.h"
#include "tessera/base/error.h"

namespace tessera {

Dataset generate_products_like(const GenOptions& o) {
  const int64_t n = o.nodes ? o.nodes : 2449029;
  const int64_t m = o.edges ? o.edges : 61859140;
  const int64_t classes = o.classes ? o.classes : 47;
  const int64_t dim = o.feat_dim ? o.feat_dim : 100;
  if (n < 2 || classes < 1) fail("products-like needs at least 2 nodes and 1 class");
  if (m % 2) fail("products-like is symmetric: --edges must be even, got {}", m);
  const std::vector<int64_t> cls = skewed_classes(n, classes, o.seed, 1);
  const std::vector<double> activity = powerlaw_activity(n, o.seed, 2);
  const AliasTable any(activity);
  std::vector<std::vector<int64_t>> members(classes);
  for (int64_t i = 0; i < n; ++i) members[cls[i]].push_back(i);
  std::vector<AliasTable> within(classes);
  for (int64_t c = 0; c < classes; ++c) {
    std::vector<double> w;
    for (int64_t i : members[c]) w.push_back(activity[i]);
    if (!w.empty()) within[c] = AliasTable(w);
  }
  constexpr double kHomophily = 0.85;
  auto draw = [&](Rng& rng, int64_t* u, int64_t* v) {
    *u = any.sample(rng);
    const int64_t c = cls[*u];
    *v = rng.uniform() < kHomophily && members[c].size() > 1 ? members[c][within[c].sample(rng)] : any.sample(rng);
  };
  Dataset d;
  d.name = "products-like";
  NodeType t;
  t.name = "_N";
  t.count = n;
  EdgeType e{"_N", "_E", "_N", {}, {}, {}};
  generate_unique_edges(m, true, o.seed, 3, draw, &e.src, &e.dst);
  t.data["feat"] = class_features(&cls, n, dim, classes, 0.3, o.seed, 4);
  t.data["label"] = Array::from_vector(cls);
  random_split(&t, o.train_frac, o.val_frac, o.test_frac, o.seed, 5);
  d.node_types.push_back(std::move(t));
  d.edge_types.push_back(std::move(e));
  return d;
}

}  // namespace tessera
