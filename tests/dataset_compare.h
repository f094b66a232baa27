// Two datasets hold the same graph: node types with their counts, node data byte for byte and splits, edge types
// with their endpoints, in order (not the dataset's name, nor edge data: callers check those where they
// round-trip). Records gtest failures (wrap calls in ASSERT_NO_FATAL_FAILURE where later steps depend on them).
#pragma once

#include <string>

#include "tessera/graph/dataset.h"

namespace tessera::testing {

void expect_same_array(const Array& a, const Array& b, const std::string& what);
void expect_same_dataset(const Dataset& a, const Dataset& b);

}  // namespace tessera::testing
