// An independent check of a partitioned graph against the dataset it came
// from (it does not trust `inspect`): ID maps are bijections, every original
// edge is stored exactly once with the owner of its destination and the right
// endpoints, and all node/edge data survive (compared through original IDs).
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/dataset.h"

namespace tessera::testing {

struct PartCounts {
  int64_t nodes = 0, edges = 0, train = 0;
};

// Fills per-partition counts; records gtest failures for broken invariants
// (wrap calls in ASSERT_NO_FATAL_FAILURE).
void check_partitioned(const Dataset& original, const std::string& config_path, std::vector<PartCounts>* counts);

// max |x - mean| / mean over partitions.
double max_deviation(const std::vector<PartCounts>& parts, int64_t PartCounts::*field);

}  // namespace tessera::testing
