#include "dataset_compare.h"

#include <cstring>

#include <gtest/gtest.h>

namespace tessera::testing {

void expect_same_array(const Array& a, const Array& b, const std::string& what) {
  ASSERT_EQ(a.empty_handle(), b.empty_handle()) << what;
  if (a.empty_handle()) return;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes())) << what;
}

void expect_same_dataset(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.node_types.size(), b.node_types.size());
  for (size_t t = 0; t < a.node_types.size(); ++t) {
    const NodeType& x = a.node_types[t];
    const NodeType& y = b.node_types[t];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.count, y.count);
    ASSERT_EQ(x.data.size(), y.data.size()) << x.name;
    for (const auto& [key, array] : x.data) expect_same_array(array, y.data.at(key), x.name + "." + key);
    expect_same_array(x.train, y.train, x.name + " train");
    expect_same_array(x.val, y.val, x.name + " val");
    expect_same_array(x.test, y.test, x.name + " test");
  }
  ASSERT_EQ(a.edge_types.size(), b.edge_types.size());
  for (size_t k = 0; k < a.edge_types.size(); ++k) {
    const EdgeType& x = a.edge_types[k];
    const EdgeType& y = b.edge_types[k];
    EXPECT_EQ(x.canonical(), y.canonical());
    expect_same_array(x.src, y.src, x.canonical() + " src");
    expect_same_array(x.dst, y.dst, x.canonical() + " dst");
  }
}

}  // namespace tessera::testing
