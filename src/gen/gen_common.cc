#include "gen_common.h"

#include <parallel/algorithm>

#include <algorithm>
#include <cmath>

#include "base/progress.h"
#include "tessera/base/error.h"

namespace tessera {

AliasTable::AliasTable(const std::vector<double>& weights) {
  const size_t n = weights.size();
  prob_.assign(n, 0.0);
  alias_.assign(n, 0);
  double total = 0;
  for (double w : weights) total += w;
  if (n == 0 || total <= 0) fail("internal error: alias table over no weight");
  std::vector<double> scaled(n);
  std::vector<int64_t> small, large;
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = weights[i] * n / total;
    (scaled[i] < 1.0 ? small : large).push_back(static_cast<int64_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    int64_t s = small.back(), l = large.back();
    small.pop_back();
    prob_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (int64_t i : large) prob_[i] = 1.0;
  for (int64_t i : small) prob_[i] = 1.0;
}

int64_t AliasTable::sample(Rng& rng) const {
  const int64_t i = static_cast<int64_t>(rng.below(prob_.size()));
  return rng.uniform() < prob_[i] ? i : alias_[i];
}

std::vector<double> powerlaw_activity(int64_t n, uint64_t seed, uint64_t stream) {
  std::vector<double> a(n);
  Rng rng(seed, stream);
  for (auto& x : a) x = std::min(std::pow(1.0 - rng.uniform(), -1.0 / 1.5), 1e4);
  return a;
}

std::vector<int64_t> skewed_classes(int64_t n, int64_t classes, uint64_t seed, uint64_t stream) {
  std::vector<double> w(classes);
  for (int64_t c = 0; c < classes; ++c) w[c] = 1.0 / std::pow(c + 1.0, 0.6);
  AliasTable table(w);
  Rng rng(seed, stream);
  std::vector<int64_t> cls(n);
  for (auto& c : cls) c = table.sample(rng);
  // Make sure every class has a member so label spaces are what was asked for.
  for (int64_t c = 0; c < std::min(classes, n); ++c) cls[rng.below(n)] = c;
  return cls;
}

void generate_unique_edges(int64_t target, bool symmetric, uint64_t seed, uint64_t stream, const EdgeDraw& draw,
                           Array* src_out, Array* dst_out) {
  if (symmetric && target % 2) fail("a symmetric graph needs an even number of directed edges, got {}", target);
  const int64_t wanted = symmetric ? target / 2 : target;
  std::vector<uint64_t> keys;
  keys.reserve(static_cast<size_t>(wanted * 1.1) + 16);
  constexpr int kChunks = 64;
  Progress bar("gen: edges", wanted);
  for (int round = 0; static_cast<int64_t>(keys.size()) < wanted; ++round) {
    if (round > 40) fail("could not draw {} distinct edges: the graph is too dense for its node count", wanted);
    const int64_t deficit = wanted - static_cast<int64_t>(keys.size());
    const int64_t per_chunk = (deficit + deficit / 10 + 64 + kChunks - 1) / kChunks;
    std::vector<std::vector<uint64_t>> chunk(kChunks);
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < kChunks; ++c) {
      Rng rng(seed, (stream << 20) + round * kChunks + c);
      auto& out = chunk[c];
      out.reserve(per_chunk);
      for (int64_t i = 0; i < per_chunk; ++i) {
        int64_t u, v;
        draw(rng, &u, &v);
        if (u == v) continue;
        if (symmetric && u > v) std::swap(u, v);
        out.push_back((static_cast<uint64_t>(u) << 32) | static_cast<uint64_t>(v));
      }
      bar.add(static_cast<int64_t>(out.size()));
    }
    for (auto& c : chunk) keys.insert(keys.end(), c.begin(), c.end());
    __gnu_parallel::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    bar.set(static_cast<int64_t>(keys.size()));  // duplicates drawn do not count
  }
  // Drop a random surplus (not the largest keys, which would bias the graph).
  if (static_cast<int64_t>(keys.size()) > wanted) {
    Rng rng(seed, (stream << 20) + 0xfffff);
    for (int64_t i = static_cast<int64_t>(keys.size()) - 1; i >= wanted; --i) {
      const int64_t j = static_cast<int64_t>(rng.below(i + 1));
      std::swap(keys[i], keys[j]);
    }
    keys.resize(wanted);
    __gnu_parallel::sort(keys.begin(), keys.end());
  }
  *src_out = Array::zeros(DType::kInt64, {target});
  *dst_out = Array::zeros(DType::kInt64, {target});
  int64_t* s = src_out->data<int64_t>();
  int64_t* d = dst_out->data<int64_t>();
#pragma omp parallel for
  for (int64_t i = 0; i < wanted; ++i) {
    const int64_t u = static_cast<int64_t>(keys[i] >> 32), v = static_cast<int64_t>(keys[i] & 0xffffffffULL);
    s[i] = u;
    d[i] = v;
    if (symmetric) {
      s[wanted + i] = v;
      d[wanted + i] = u;
    }
  }
}

Array class_features(const std::vector<int64_t>* node_class, int64_t n, int64_t dim, int64_t num_classes, double signal,
                     uint64_t seed, uint64_t stream) {
  std::vector<float> centroids;
  if (node_class) {
    Rng rng(seed, stream * 1000 + 1);
    centroids.resize(static_cast<size_t>(num_classes * dim));
    for (auto& x : centroids) x = static_cast<float>(rng.normal());
  }
  Array feat = Array::zeros(DType::kFloat32, {n, dim});
  float* f = feat.data<float>();
  constexpr int64_t kRowsPerChunk = 4096;
  const int64_t chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
  Progress bar("gen: features", n);
#pragma omp parallel for schedule(dynamic, 4)
  for (int64_t c = 0; c < chunks; ++c) {
    Rng rng(seed, (stream << 32) + c);
    for (int64_t i = c * kRowsPerChunk; i < std::min(n, (c + 1) * kRowsPerChunk); ++i) {
      const float* mu = node_class ? centroids.data() + (*node_class)[i] * dim : nullptr;
      for (int64_t j = 0; j < dim; ++j)
        f[i * dim + j] = static_cast<float>(rng.normal() + (mu ? signal * mu[j] : 0.0));
    }
    bar.add(std::min(n, (c + 1) * kRowsPerChunk) - c * kRowsPerChunk);
  }
  return feat;
}

void random_split(NodeType* t, double train, double val, double test, uint64_t seed, uint64_t stream) {
  if (train < 0 || val < 0 || test < 0 || train + val + test > 1.0 + 1e-9)
    fail("split fractions must be non-negative and sum to at most 1 (train {}, val {}, test {})", train, val, test);
  std::vector<int64_t> order(t->count);
  for (int64_t i = 0; i < t->count; ++i) order[i] = i;
  Rng rng(seed, stream);
  for (int64_t i = t->count - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  const int64_t n_train = static_cast<int64_t>(train * t->count);
  const int64_t n_val = static_cast<int64_t>(val * t->count);
  const int64_t n_test = static_cast<int64_t>(test * t->count);
  auto take = [&](int64_t begin, int64_t count) {
    std::vector<int64_t> ids(order.begin() + begin, order.begin() + begin + count);
    std::sort(ids.begin(), ids.end());
    return Array::from_vector(ids);
  };
  t->train = take(0, n_train);
  t->val = take(n_train, n_val);
  t->test = take(n_train + n_val, n_test);
}

}  // namespace tessera
