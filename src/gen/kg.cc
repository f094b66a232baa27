// A knowledge graph with learnable structure: entities fall into clusters,
// each relation maps every cluster to one target cluster, and a triple's tail
// comes from the target cluster of its head (90%) with popularity-weighted
// choice. Names "e<id>" / "r<id>"; 90/5/5 train/valid/test.
#include "gen_common.h"
#include "tessera/gen/generators.h"
#include "tessera/base/error.h"

namespace tessera {

Dataset generate_kg(const GenOptions& o) {
  const int64_t n = o.nodes ? o.nodes : 10000;
  const int64_t m = o.edges ? o.edges : 20 * n;
  const int64_t relations = o.relations ? o.relations : 50;
  if (n < 2 || relations < 1) fail("kg needs at least 2 entities and 1 relation");
  if (relations >= (int64_t{1} << 16)) fail("kg: --relations must be below 65536");
  const int64_t clusters = std::max<int64_t>(2, n / 50);
  Rng setup(o.seed, 1);
  std::vector<int64_t> cluster(n);
  for (auto& c : cluster) c = static_cast<int64_t>(setup.below(clusters));
  std::vector<std::vector<int64_t>> members(clusters);
  for (int64_t i = 0; i < n; ++i) members[cluster[i]].push_back(i);
  std::vector<int64_t> target(relations * clusters);
  for (auto& t : target) t = static_cast<int64_t>(setup.below(clusters));
  const std::vector<double> popularity = powerlaw_activity(n, o.seed, 2);
  const AliasTable any(popularity);
  std::vector<double> rel_weight(relations);
  for (int64_t r = 0; r < relations; ++r) rel_weight[r] = 1.0 / (r + 1.0);
  const AliasTable rel_table(rel_weight);

  // Triples are drawn as (head, relation * n + tail) pairs so that the shared
  // deduplication sees each distinct triple once.
  if (relations * n >= (int64_t{1} << 32)) fail("kg: --relations x --nodes must stay below 2^32");
  EdgeType pairs{kEntityType, kTripleRelation, kEntityType, {}, {}, {}};
  generate_unique_edges(m, false, o.seed, 3, [&](Rng& rng, int64_t* u, int64_t* v) {
    const int64_t h = any.sample(rng);
    const int64_t r = rel_table.sample(rng);
    const auto& pool = members[target[r * clusters + cluster[h]]];
    const int64_t t = rng.uniform() < 0.9 && !pool.empty() ? pool[rng.below(pool.size())] : any.sample(rng);
    *u = h;
    *v = r * n + t;
  }, &pairs.src, &pairs.dst);

  // Shuffle, then split 90 / 5 / 5.
  std::vector<int64_t> order(m);
  for (int64_t i = 0; i < m; ++i) order[i] = i;
  Rng rng(o.seed, 4);
  for (int64_t i = m - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  const int64_t n_valid = m / 20, n_test = m / 20, n_train = m - n_valid - n_test;
  const int64_t* hs = pairs.src.data<int64_t>();
  const int64_t* rt = pairs.dst.data<int64_t>();
  std::vector<int64_t> head, tail, rel;
  Array valid = Array::zeros(DType::kInt64, {n_valid, 3}), test = Array::zeros(DType::kInt64, {n_test, 3});
  for (int64_t i = 0; i < m; ++i) {
    const int64_t k = order[i];
    const int64_t h = hs[k], r = rt[k] / n, t = rt[k] % n;
    if (i < n_train) {
      head.push_back(h);
      rel.push_back(r);
      tail.push_back(t);
    } else {
      int64_t* row = i < n_train + n_valid ? valid.data<int64_t>() + 3 * (i - n_train)
                                           : test.data<int64_t>() + 3 * (i - n_train - n_valid);
      row[0] = h;
      row[1] = r;
      row[2] = t;
    }
  }
  Dataset d;
  d.name = "kg";
  NodeType e;
  e.name = kEntityType;
  e.count = n;
  for (int64_t i = 0; i < n; ++i) e.names.push_back("e" + std::to_string(i));
  d.node_types.push_back(std::move(e));
  EdgeType triples{kEntityType, kTripleRelation, kEntityType, {}, {}, {}};
  triples.src = Array::from_vector(head);
  triples.dst = Array::from_vector(tail);
  triples.data[kRelationField] = Array::from_vector(rel);
  d.edge_types.push_back(std::move(triples));
  d.extra["valid_triples"] = valid;
  d.extra["test_triples"] = test;
  for (int64_t r = 0; r < relations; ++r) d.relation_names.push_back("r" + std::to_string(r));
  return d;
}

}  // namespace tessera
