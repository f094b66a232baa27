// All-pairs (pairwise) test design: rows of factor values such that every
// value of every factor meets every value of every other factor in some
// row. Far fewer rows than the full product (a factor with a values and one
// with b need at least a*b rows), and most interaction bugs involve two
// settings. Greedy (AETG-style) and deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::testing {

struct Factor {
  std::string name;
  std::vector<std::string> values;
};

// Each row holds one value index per factor, in the factors' order.
using PairwiseRow = std::vector<int>;

std::vector<PairwiseRow> all_pairs(const std::vector<Factor>& factors, uint64_t seed = 1);

// Pairs of values (over all factor pairs) that no row covers; empty for a
// valid design.
int64_t uncovered_pairs(const std::vector<Factor>& factors, const std::vector<PairwiseRow>& rows);

}  // namespace tessera::testing
