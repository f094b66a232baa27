// Pieces shared by the generators: weighted sampling, edge deduplication,
// class-dependent features, random splits, power-law activities.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/graph/dataset.h"
#include "tessera/base/random.h"

namespace tessera {

// Walker's alias method: O(1) draws from a fixed discrete distribution.
class AliasTable {
 public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& weights);
  int64_t sample(Rng& rng) const;
  size_t size() const { return prob_.size(); }

 private:
  std::vector<double> prob_;
  std::vector<int64_t> alias_;
};

// Per-node activity from a Pareto tail (P(a > x) ~ x^-1.5) for power-law degrees.
std::vector<double> powerlaw_activity(int64_t n, uint64_t seed, uint64_t stream);

// Class of each node, drawn from skewed class sizes (weight ~ 1/(c+1)^0.6).
std::vector<int64_t> skewed_classes(int64_t n, int64_t classes, uint64_t seed, uint64_t stream);

// Generates `target` distinct directed edges (u, v), u != v, by calling
// `draw(rng, &u, &v)` in parallel chunks; draws that repeat are discarded. With
// `symmetric` the pairs are unordered and both directions are returned, so
// target must be even. Deterministic in the seed whatever the thread count.
using EdgeDraw = std::function<void(Rng&, int64_t*, int64_t*)>;
void generate_unique_edges(int64_t target, bool symmetric, uint64_t seed, uint64_t stream, const EdgeDraw& draw,
                           Array* src, Array* dst);

// float32 [n, dim] features: signal * centroid[class] + N(0, 1) noise. With
// classes == nullptr, pure noise.
Array class_features(const std::vector<int64_t>* node_class, int64_t n, int64_t dim, int64_t num_classes, double signal,
                     uint64_t seed, uint64_t stream);

// Random disjoint train / val / test IDs with the given fractions.
void random_split(NodeType* type, double train, double val, double test, uint64_t seed, uint64_t stream);

}  // namespace tessera
