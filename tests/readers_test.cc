// Dataset readers on the real files in ../shared/data and on round trips
// through the layouts Tessera writes.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <zlib.h>

#include "io/text.h"
#include "tessera/base/error.h"
#include "tessera/gen/generators.h"
#include "tessera/io/dataset_io.h"
#include "dataset_compare.h"
#include "test_util.h"

namespace tessera {
namespace {

using testing::TempDir;
using testing::expect_same_array;
using testing::expect_same_dataset;

TEST(Readers, CoraFromOgbRawLayout) {
  TESSERA_REQUIRE_SHARED("node/cora", path);
  EXPECT_EQ(detect_format(path), "ogb");
  const Dataset d = read_dataset(path);
  ASSERT_EQ(d.node_types.size(), 1u);
  const NodeType& t = d.node_types[0];
  EXPECT_EQ(t.count, 2708);
  EXPECT_EQ(d.num_edges(), 10556);
  EXPECT_EQ(t.data.at("feat").shape(), (std::vector<int64_t>{2708, 1433}));
  const Array& label = t.data.at("label");
  EXPECT_EQ(*std::max_element(label.data<int64_t>(), label.data<int64_t>() + 2708), 6);
  EXPECT_EQ(t.train.numel(), 140);
  EXPECT_EQ(t.val.numel(), 500);
  EXPECT_EQ(t.test.numel(), 1000);
  EXPECT_EQ(d.name, "cora");
}

TEST(Readers, Fb15k237FromNameTriples) {
  TESSERA_REQUIRE_SHARED("kg/FB15k-237", path);
  EXPECT_EQ(detect_format(path), "kg");
  const Dataset d = read_dataset(path);
  EXPECT_EQ(d.node_types[0].count, 14541);
  EXPECT_EQ(d.relation_names.size(), 237u);
  EXPECT_EQ(d.num_edges(), 272115);
  EXPECT_EQ(d.extra.at("valid_triples").shape(), (std::vector<int64_t>{17535, 3}));
  EXPECT_EQ(d.extra.at("test_triples").shape(), (std::vector<int64_t>{20466, 3}));
  EXPECT_EQ(d.edge_types[0].data.at(kRelationField).numel(), 272115);
}

TEST(Readers, Wn18rrOpenKeIdsMatchNameTriples) {
  TESSERA_REQUIRE_SHARED("kg/WN18RR-openke", path);
  EXPECT_EQ(detect_format(path), "openke");
  const Dataset d = read_dataset(path);
  EXPECT_EQ(d.node_types[0].count, 40943);
  EXPECT_EQ(d.relation_names.size(), 11u);
  EXPECT_EQ(d.num_edges(), 86835);
  EXPECT_EQ(d.extra.at("valid_triples").rows(), 3034);
  EXPECT_EQ(d.extra.at("test_triples").rows(), 3134);
  // train2id.txt is "h t r": its first line "0 1 0" is head 0, tail 1, relation 0.
  EXPECT_EQ(d.edge_types[0].src.data<int64_t>()[0], 0);
  EXPECT_EQ(d.edge_types[0].dst.data<int64_t>()[0], 1);
  EXPECT_EQ(d.edge_types[0].data.at(kRelationField).data<int64_t>()[0], 0);
}

TEST(Readers, AifbRdfWithLabels) {
  TESSERA_REQUIRE_SHARED("hetero/AIFB", path);
  EXPECT_EQ(detect_format(path), "rdf");
  const Dataset d = read_dataset(path);
  EXPECT_EQ(d.num_nodes(), 8285);
  EXPECT_EQ(d.num_edges(), 29043);
  const NodeType& person = d.node_type("Person");
  EXPECT_EQ(person.train.numel(), 140);
  EXPECT_EQ(person.test.numel(), 36);
  const Array& label = person.data.at("label");
  std::set<int64_t> classes;
  for (int64_t i = 0; i < person.train.numel(); ++i) classes.insert(label.data<int64_t>()[person.train.data<int64_t>()[i]]);
  EXPECT_EQ(classes, (std::set<int64_t>{0, 1, 2, 3}));
}

GenOptions mag_like(int64_t nodes, int64_t edges, uint64_t seed) {
  GenOptions o;
  o.kind = "mag-like";
  o.nodes = nodes;
  o.edges = edges;
  o.feat_dim = 8;
  o.classes = 20;
  o.seed = seed;
  return o;
}

TEST(Readers, OgbMagLayoutRoundTrip) {
  const Dataset d = generate(mag_like(3000, 20000, 3));
  TempDir dir;
  write_ogb_dataset(d, dir / "mag", "time");
  ASSERT_TRUE(std::filesystem::exists(dir / "mag/raw/num-node-dict.csv.gz"));
  ASSERT_TRUE(std::filesystem::exists(dir / "mag/raw/relations/author___writes___paper/edge.csv.gz"));
  ASSERT_TRUE(std::filesystem::exists(dir / "mag/split/time/paper/train.csv.gz"));
  EXPECT_EQ(detect_format(dir / "mag"), "ogb-mag");
  expect_same_dataset(d, read_dataset(dir / "mag"));
}

// `tessera partition --rename`: DGL's example scripts read "features" and
// "labels"; a rename that cannot apply is an error naming the pair.
TEST(Readers, RenameNodeData) {
  Dataset d = generate(mag_like(2000, 10000, 1));
  rename_node_data(&d, "feat=features,label=labels");
  const auto& paper = *std::find_if(d.node_types.begin(), d.node_types.end(),
                                    [](const auto& t) { return t.name == "paper"; });
  EXPECT_TRUE(paper.data.count("features") && paper.data.count("labels"));
  EXPECT_FALSE(paper.data.count("feat") || paper.data.count("label"));
  const auto error_of = [&](const std::string& renames) {
    try {
      rename_node_data(&d, renames);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("features").find("expected OLD=NEW"), std::string::npos);
  EXPECT_NE(error_of("train_mask=train").find("keep DGL's names"), std::string::npos);
  EXPECT_NE(error_of("features=labels").find("already has data 'labels'"), std::string::npos);
  EXPECT_NE(error_of("nosuch=x").find("no node type of"), std::string::npos);
}

TEST(Readers, OgbHomogeneousAndTesseraRoundTrips) {
  GenOptions o;
  o.kind = "products-like";
  o.nodes = 2000;
  o.edges = 20000;
  o.feat_dim = 5;
  o.seed = 4;
  const Dataset d = generate(o);
  TempDir dir;
  write_ogb_dataset(d, dir / "ogb", "random");
  expect_same_dataset(d, read_dataset(dir / "ogb"));
  write_tessera_dataset(d, dir / "tessera");
  EXPECT_EQ(detect_format(dir / "tessera"), "tessera");
  expect_same_dataset(d, read_dataset(dir / "tessera"));

  GenOptions k;
  k.kind = "kg";
  k.nodes = 500;
  k.edges = 4000;
  const Dataset kg = generate(k);
  write_tessera_dataset(kg, dir / "kg");
  const Dataset back = read_dataset(dir / "kg");
  expect_same_dataset(kg, back);
  EXPECT_EQ(back.relation_names, kg.relation_names);
  EXPECT_EQ(back.node_types[0].names, kg.node_types[0].names);
  expect_same_array(back.extra.at("test_triples"), kg.extra.at("test_triples"), "test triples");
  expect_same_array(back.edge_types[0].data.at(kRelationField), kg.edge_types[0].data.at(kRelationField), "relations");
}

TEST(Readers, DglKeUddLayout) {
  TempDir dir;
  std::ofstream(dir / "entities.dict") << "0\ta\n1\tb\n2\tc\n";
  std::ofstream(dir / "relations.dict") << "0\tlikes\n1\tknows\n";
  std::ofstream(dir / "train.txt") << "0\t1\t2\n2\t0\t1\n";
  std::ofstream(dir / "valid.txt") << "1\t1\t0\n";
  const Dataset d = read_dataset(dir.path());
  EXPECT_EQ(d.node_types[0].count, 3);
  EXPECT_EQ(d.node_types[0].names[2], "c");
  EXPECT_EQ(d.edge_types[0].dst.data<int64_t>()[0], 2);
  EXPECT_EQ(d.edge_types[0].data.at(kRelationField).data<int64_t>()[0], 1);
  EXPECT_EQ(d.extra.at("valid_triples").data<int64_t>()[2], 0);
}

TEST(Readers, OgbRejectsNegativeAndUnbackedNodeCounts) {
  // Found by tests/fuzz/ogb_fuzz.cc: a node count of 10^12 in
  // num-node-list.csv.gz made the label reader reserve 8 TB before reading a
  // row, and a negative one threw std::length_error ("vector::reserve").
  TempDir dir;
  std::filesystem::create_directories(dir / "raw");
  std::ofstream(dir / "raw/edge.csv.gz") << "0,0\n";
  std::ofstream(dir / "raw/node-label.csv.gz") << "1\n";
  const auto expect_rejected = [&](const std::string& count, const std::string& file, const std::string& message) {
    std::ofstream(dir / "raw/num-node-list.csv.gz") << count << "\n";
    try {
      read_dataset(dir.path());
      ADD_FAILURE() << "node count " << count << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file + ": " + message), std::string::npos) << e.what();
    }
  };
  expect_rejected("1000000000000", "node-label.csv.gz", "1 labels, expected one per node (1000000000000)");
  expect_rejected("-5", "num-node-list.csv.gz", "the count is -5, expected a number >= 0");
  // Found by scripts/fuzz (ogb, kg and ip_config targets): an integer written
  // as a float beyond int64's range ("3e50") was cast to int64 (undefined).
  expect_rejected("3e50", "num-node-list.csv.gz:1", "expected an integer (count), found '3e50'");
}

TEST(Readers, IntegersWrittenAsFloatsMustFitInt64) {
  EXPECT_EQ(parse_int("3.0", "f:1", "count"), 3);
  EXPECT_EQ(parse_int("-2e3", "f:1", "count"), -2000);
  for (const char* field : {"3e50", "-1e19", "9.3e18", "2.5", "nan", "inf"}) {
    try {
      parse_int(field, "f:1", "count");
      ADD_FAILURE() << field << " accepted as an integer";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("f:1: expected an integer count, found '") + field + "'"),
                std::string::npos) << e.what();
    }
  }
}

// LineReader sizes its buffer to the file: lines that cross the buffer's end
// come back whole, in plain files around the 16 KB floor and in a gzip file
// whose text is many times its compressed size (and so its buffer).
TEST(Readers, LinesCrossingTheBufferComeBackWhole) {
  TempDir dir;
  const auto lines_of = [](int count, int width) {
    std::vector<std::string> lines;
    for (int i = 0; i < count; ++i)
      lines.push_back(std::to_string(i) + std::string(width, static_cast<char>('a' + i % 26)));
    return lines;
  };
  const auto expect_read_back = [](const std::string& path, const std::vector<std::string>& lines) {
    LineReader reader(path);
    std::string_view line;
    size_t n = 0;
    while (reader.next(&line)) {
      ASSERT_LT(n, lines.size()) << path;
      EXPECT_EQ(line, lines[n]) << path << " line " << n + 1;
      ++n;
    }
    EXPECT_EQ(n, lines.size()) << path;
  };
  for (const int width : {97, 16 * 1024 - 2, 16 * 1024, 40000}) {
    const std::vector<std::string> lines = lines_of(3, width);
    const std::string path = dir / ("plain-" + std::to_string(width) + ".txt");
    std::ofstream out(path);
    for (const std::string& l : lines) out << l << "\n";
    out.close();
    expect_read_back(path, lines);
  }
  const std::vector<std::string> lines = lines_of(20000, 60);
  const std::string gz = dir / "many.txt.gz";
  gzFile f = gzopen(gz.c_str(), "wb9");
  ASSERT_NE(f, nullptr);
  for (const std::string& l : lines) gzprintf(f, "%s\n", l.c_str());
  gzclose(f);
  ASSERT_LT(std::filesystem::file_size(gz) * 10, size_t{20000} * 60);
  expect_read_back(gz, lines);
}

}  // namespace
}  // namespace tessera
