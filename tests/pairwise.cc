#include "pairwise.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tessera::testing {
namespace {

// covered[i][j][a * |j| + b]: value a of factor i met value b of factor j (i < j).
using Coverage = std::vector<std::vector<std::vector<char>>>;

Coverage empty_coverage(const std::vector<Factor>& f) {
  Coverage c(f.size(), std::vector<std::vector<char>>(f.size()));
  for (size_t i = 0; i < f.size(); ++i)
    for (size_t j = i + 1; j < f.size(); ++j) c[i][j].assign(f[i].values.size() * f[j].values.size(), 0);
  return c;
}

char& cell(Coverage& c, const std::vector<Factor>& f, size_t i, int a, size_t j, int b) {
  if (i > j) {
    std::swap(i, j);
    std::swap(a, b);
  }
  return c[i][j][a * f[j].values.size() + b];
}

// Pairs a full row would newly cover.
int64_t gain(Coverage& c, const std::vector<Factor>& f, const PairwiseRow& row) {
  int64_t g = 0;
  for (size_t i = 0; i < f.size(); ++i)
    for (size_t j = i + 1; j < f.size(); ++j) g += !cell(c, f, i, row[i], j, row[j]);
  return g;
}

}  // namespace

std::vector<PairwiseRow> all_pairs(const std::vector<Factor>& factors, uint64_t seed) {
  const std::vector<Factor>& f = factors;
  Coverage covered = empty_coverage(f);
  int64_t missing = 0;
  for (size_t i = 0; i < f.size(); ++i)
    for (size_t j = i + 1; j < f.size(); ++j) missing += static_cast<int64_t>(covered[i][j].size());
  std::mt19937_64 rng(seed);
  std::vector<PairwiseRow> rows;
  if (f.empty()) return rows;
  while (missing > 0 || rows.empty()) {
    // Of a few candidates, each built factor by factor in a random order
    // picking the value that covers most new pairs with those already
    // chosen, keep the one covering most.
    PairwiseRow best;
    int64_t best_gain = -1;
    for (int candidate = 0; candidate < 30; ++candidate) {
      std::vector<size_t> order(f.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      PairwiseRow row(f.size(), -1);
      for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        int best_value = 0;
        int64_t best_value_gain = -1;
        const int n = static_cast<int>(f[i].values.size());
        const int start = static_cast<int>(rng() % static_cast<uint64_t>(n));
        for (int step = 0; step < n; ++step) {
          const int a = (start + step) % n;
          int64_t g = 0;
          for (size_t m = 0; m < k; ++m) g += !cell(covered, f, i, a, order[m], row[order[m]]);
          // With nothing chosen yet, prefer a value with uncovered pairs left.
          if (k == 0)
            for (size_t j = 0; j < f.size(); ++j)
              for (int b = 0; j != i && b < static_cast<int>(f[j].values.size()); ++b)
                g += !cell(covered, f, i, a, j, b);
          if (g > best_value_gain) {
            best_value_gain = g;
            best_value = a;
          }
        }
        row[i] = best_value;
      }
      const int64_t g = gain(covered, f, row);
      if (g > best_gain) {
        best_gain = g;
        best = row;
      }
    }
    for (size_t i = 0; i < f.size(); ++i)
      for (size_t j = i + 1; j < f.size(); ++j) {
        char& c = cell(covered, f, i, best[i], j, best[j]);
        missing -= !c;
        c = 1;
      }
    rows.push_back(best);
  }
  return rows;
}

int64_t uncovered_pairs(const std::vector<Factor>& factors, const std::vector<PairwiseRow>& rows) {
  Coverage covered = empty_coverage(factors);
  for (const PairwiseRow& row : rows)
    for (size_t i = 0; i < factors.size(); ++i)
      for (size_t j = i + 1; j < factors.size(); ++j) cell(covered, factors, i, row[i], j, row[j]) = 1;
  int64_t n = 0;
  for (size_t i = 0; i < factors.size(); ++i)
    for (size_t j = i + 1; j < factors.size(); ++j) n += std::count(covered[i][j].begin(), covered[i][j].end(), 0);
  return n;
}

}  // namespace tessera::testing
