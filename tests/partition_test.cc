// The partitioner on generated graphs and on the real datasets.
#include <fstream>

#include "partition_check.h"
#include "tessera/base/error.h"
#include "tessera/gen/generators.h"
#include "tessera/io/dataset_io.h"
#include "tessera/partition/partition.h"
#include "tessera/partition/partition_config.h"
#include "partition/inspect.h"
#include "test_util.h"

namespace tessera {
namespace {

using testing::check_partitioned;
using testing::max_deviation;
using testing::PartCounts;
using testing::TempDir;

PartitionOptions options_for(const std::string& out, int parts, const std::string& method = "metis") {
  PartitionOptions o;
  o.graph_name = "g";
  o.num_parts = parts;
  o.method = method;
  o.balance_train = true;
  o.balance_edges = true;
  o.out_dir = out;
  return o;
}

void expect_balanced(const std::vector<PartCounts>& counts, bool has_train) {
  EXPECT_LE(max_deviation(counts, &PartCounts::nodes), 0.10) << "node counts";
  EXPECT_LE(max_deviation(counts, &PartCounts::edges), 0.10) << "edge counts";
  if (has_train) {
    EXPECT_LE(max_deviation(counts, &PartCounts::train), 0.10) << "training-node counts";
  }
}

// Partitions `d` into 4 balanced METIS parts and checks everything; also
// runs the same checks through `inspect`.
void partition_and_check(const Dataset& d, bool check_balance = true) {
  TempDir dir;
  const std::string out = dir / "out";
  partition_dataset(d, options_for(out, 4));
  std::vector<PartCounts> counts;
  ASSERT_NO_FATAL_FAILURE(check_partitioned(d, out + "/g.json", &counts));
  if (check_balance) expect_balanced(counts, d.num_train() > 0);
  const InspectReport report = inspect_partitions(out + "/g.json");
  ASSERT_EQ(report.parts.size(), 4u);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(report.parts[p].owned_nodes, counts[p].nodes);
    EXPECT_EQ(report.parts[p].in_edges, counts[p].edges);
    EXPECT_EQ(report.parts[p].train_nodes, counts[p].train);
  }
}

GenOptions small(const std::string& kind, int64_t nodes, int64_t edges) {
  GenOptions o;
  o.kind = kind;
  o.nodes = nodes;
  o.edges = edges;
  o.feat_dim = 16;
  o.seed = 7;
  return o;
}

TEST(Partition, ProductsLikeMetisBalanced) { partition_and_check(generate(small("products-like", 20000, 300000))); }

TEST(Partition, MagLikeHeterogeneous) { partition_and_check(generate(small("mag-like", 30000, 200000))); }

TEST(Partition, KnowledgeGraphKeepsRelationsAndSplits) { partition_and_check(generate(small("kg", 5000, 60000))); }

TEST(Partition, RandomMethodAndOnePart) {
  const Dataset d = generate(small("rmat", 4000, 40000));
  for (auto [method, parts] : {std::pair{"random", 3}, {"metis", 1}, {"random", 1}}) {
    TempDir dir;
    partition_dataset(d, options_for(dir / "out", parts, method));
    std::vector<PartCounts> counts;
    ASSERT_NO_FATAL_FAILURE(check_partitioned(d, dir / "out/g.json", &counts));
    ASSERT_EQ(static_cast<int>(counts.size()), parts);
    if (std::string(method) == "random") {
      EXPECT_LE(max_deviation(counts, &PartCounts::nodes), 0.01);
    }
  }
}

TEST(Partition, MetisCutsAtMostHalfOfRandomOnACommunityGraph) {
  const Dataset d = generate(small("products-like", 20000, 300000));
  TempDir dir;
  const auto metis = partition_dataset(d, options_for(dir / "metis", 4, "metis"));
  const auto random = partition_dataset(d, options_for(dir / "random", 4, "random"));
  const double metis_cut = inspect_partitions(dir / "metis/g.json").edge_cut_ratio();
  const double random_cut = inspect_partitions(dir / "random/g.json").edge_cut_ratio();
  EXPECT_NEAR(metis_cut, metis.edge_cut_ratio(), 1e-12);
  EXPECT_NEAR(random_cut, random.edge_cut_ratio(), 1e-12);
  EXPECT_LE(metis_cut, 0.5 * random_cut) << "metis " << metis_cut << " random " << random_cut;
}

TEST(Partition, DeterministicForASeed) {
  const Dataset d = generate(small("products-like", 5000, 50000));
  TempDir dir;
  partition_dataset(d, options_for(dir / "a", 2));
  partition_dataset(d, options_for(dir / "b", 2));
  EXPECT_EQ(inspect_partitions(dir / "a/g.json").json(), inspect_partitions(dir / "b/g.json").json());
}

class RealDataset : public ::testing::TestWithParam<const char*> {};

TEST_P(RealDataset, PartitionsIntoFourBalancedParts) {
  TESSERA_REQUIRE_SHARED(GetParam(), path);
  const Dataset d = read_dataset(path);
  partition_and_check(d);
}

INSTANTIATE_TEST_SUITE_P(Shared, RealDataset,
                         ::testing::Values("node/cora", "node/blogcatalog", "kg/FB15k-237", "kg/WN18RR-openke",
                                           "hetero/AIFB"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(PartitionConfig, RejectsNoNodeTypesAndCountsThatAreNotIntegers) {
  // Found by tests/fuzz/partition_config_fuzz.cc: a config without node types
  // loaded and then indexed an empty node_map (undefined behaviour), and
  // get<int>() of 1e300 was undefined behaviour too.
  TempDir dir;
  const std::string parts = R"("part-0": {"node_feats": "a", "edge_feats": "b", "part_graph": "c", "orig_nids": "d",
                                          "orig_eids": "e"})";
  const std::string good = R"({"graph_name": "g", "num_parts": 1, "num_nodes": 4, "num_edges": 3,
      "ntypes": {"_N": 0}, "etypes": {"_N:_E:_N": 0}, "node_map": {"_N": [[0, 4]]},
      "edge_map": {"_N:_E:_N": [[0, 3]]}, "node_feat_schema": {"_N": {"feat": {"dtype": "float32", "shape": [8]}}},
      )" + parts + "}";
  std::ofstream(dir / "good.json") << good;
  const PartitionConfig c = PartitionConfig::load(dir / "good.json");
  EXPECT_EQ(c.num_parts, 1);
  EXPECT_EQ(c.node_feat_schema.at("_N").at("feat").row_shape, std::vector<int64_t>{8});
  const auto expect_rejected = [&](const std::string& name, const std::string& text, const std::string& message) {
    std::ofstream(dir / name) << text;
    try {
      PartitionConfig::load(dir / name);
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(name + ": " + message), std::string::npos) << e.what();
    }
  };
  expect_rejected("no_types.json",
                  R"({"graph_name": "g", "num_parts": 1, "num_nodes": 0, "num_edges": 0, "ntypes": {}, "etypes": {},
                      "node_map": {}, "edge_map": {}, )" + parts + "}",
                  "ntypes: expected an object of name -> type id (at least one type)");
  expect_rejected("float_parts.json", R"({"graph_name": "g", "num_parts": 1e300, "num_nodes": 0, "num_edges": 0})",
                  "num_parts: expected an integer in [1, 2147483647], found 1e+300");
  expect_rejected("zero_parts.json", R"({"graph_name": "g", "num_parts": 0, "num_nodes": 0, "num_edges": 0})",
                  "num_parts: expected an integer in [1, 2147483647], found 0");
  std::string float_dim = good;
  float_dim.replace(float_dim.find("[8]"), 3, "[8.5]");
  expect_rejected("float_dim.json", float_dim, "node_feat_schema._N.feat.shape: expected an integer");
}

}  // namespace
}  // namespace tessera
