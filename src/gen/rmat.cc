// RMAT (Chakrabarti et al.): each edge picks a quadrant of the adjacency
// matrix level by level with probabilities a, b, c, d; the common benchmark
// workload. Random features and labels: nothing to learn, only to move.
#include <cmath>

#include "gen_common.h"
#include "tessera/gen/generators.h"
#include "tessera/base/error.h"

namespace tessera {

Dataset generate_rmat(const GenOptions& o) {
  const int64_t n = o.nodes ? o.nodes : 1000000;
  const int64_t m = o.edges ? o.edges : 20 * n;
  if (n < 2) fail("rmat needs at least 2 nodes");
  int scale = 1;
  while ((int64_t{1} << scale) < n) ++scale;
  const double a = 0.57, b = 0.19, c = 0.19;
  auto draw = [=](Rng& rng, int64_t* u, int64_t* v) {
    do {
      int64_t x = 0, y = 0;
      for (int level = 0; level < scale; ++level) {
        const double r = rng.uniform();
        const int right = r >= a && (r < a + b || r >= a + b + c);
        const int down = r >= a + b;
        x = (x << 1) | down;
        y = (y << 1) | right;
      }
      *u = x;
      *v = y;
    } while (*u >= n || *v >= n);
  };
  Dataset d;
  d.name = "rmat";
  NodeType t;
  t.name = "_N";
  t.count = n;
  EdgeType e{"_N", "_E", "_N", {}, {}, {}};
  generate_unique_edges(m, o.symmetric, o.seed, 1, draw, &e.src, &e.dst);
  const int64_t dim = o.feat_dim ? o.feat_dim : 100;
  const int64_t classes = o.classes ? o.classes : 47;
  t.data["feat"] = class_features(nullptr, n, dim, 0, 0.0, o.seed, 2);
  Array label = Array::zeros(DType::kInt64, {n});
  Rng rng(o.seed, 3);
  for (int64_t i = 0; i < n; ++i) label.data<int64_t>()[i] = static_cast<int64_t>(rng.below(classes));
  t.data["label"] = label;
  random_split(&t, o.train_frac, o.val_frac, o.test_frac, o.seed, 4);
  d.node_types.push_back(std::move(t));
  d.edge_types.push_back(std::move(e));
  return d;
}

}  // namespace tessera
