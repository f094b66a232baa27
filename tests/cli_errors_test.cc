// Bad input through the real binary: one clear message naming the file (and
// line or field) and what was expected, a non-zero exit, and no output left.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "tessera/io/npy.h"
#include "test_util.h"

namespace tessera {
namespace {

using testing::run_tessera;
using testing::TempDir;

// A valid 10-node Tessera dataset; tests then break one thing.
void write_small_dataset(const std::string& dir, int64_t bad_dst = -1) {
  std::filesystem::create_directories(dir);
  std::vector<int64_t> edges{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0};
  if (bad_dst >= 0) edges[12] = bad_dst;
  Array e = Array::zeros(DType::kInt64, {2, 10});
  std::copy(edges.begin(), edges.end(), e.data<int64_t>());
  write_npy(dir + "/edges.npy", e);
  write_npy(dir + "/feat.npy", Array::zeros(DType::kFloat32, {10, 4}));
  write_npy(dir + "/label.npy", Array::from_vector(std::vector<int64_t>(10, 1)));
  write_npy(dir + "/train.npy", Array::from_vector(std::vector<int64_t>{0, 1, 2}));
  std::ofstream(dir + "/meta.json") << R"({"name": "small", "node_types": [{"name": "_N", "count": 10,
     "feat": "feat.npy", "label": "label.npy", "train": "train.npy"}],
     "edge_types": [{"etype": "_N:_E:_N", "edges": "edges.npy"}]})";
}

void write_gz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

class CliErrors : public ::testing::Test {
 protected:
  // Runs partition on `input`, expects failure with every `needles` in stderr,
  // and checks that nothing was left next to the output.
  void expect_partition_error(const std::string& input, std::initializer_list<std::string> needles,
                              const std::string& extra = "--num-parts 2") {
    const std::string out = work_ / "out";
    auto r = run_tessera("partition --input " + input + " " + extra + " --out " + out);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in: " << r.err;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_EQ(testing::count_entries_with_prefix(work_.path(), "out"), 0) << "leftover staging directory";
  }
  TempDir data_, work_;
};

TEST_F(CliErrors, MissingInput) {
  expect_partition_error(data_ / "nope", {data_ / "nope", "not a directory"});
}

TEST_F(CliErrors, WrongNpyDtype) {
  write_small_dataset(data_.path());
  write_npy(data_ / "label.npy", Array::zeros(DType::kFloat32, {10}));
  expect_partition_error(data_.path(), {"label.npy", "must have dtype int64, found float32"});
}

TEST_F(CliErrors, WrongNpyShape) {
  write_small_dataset(data_.path());
  write_npy(data_ / "feat.npy", Array::zeros(DType::kFloat32, {9, 4}));
  expect_partition_error(data_.path(), {"node type '_N' data 'feat'", "expected 10 rows, found shape (9, 4)"});
}

TEST_F(CliErrors, EdgeIdOutOfRange) {
  write_small_dataset(data_.path(), 99);
  expect_partition_error(data_.path(), {"edge type '_N:_E:_N' destination IDs", "is 99, expected an ID in [0, 10)"});
}

TEST_F(CliErrors, InconsistentMetaJson) {
  write_small_dataset(data_.path());
  std::ofstream(data_ / "meta.json") << R"({"node_types": [{"name": "_N", "count": 10}],
     "edge_types": [{"etype": "_N:cites:paper", "edges": "edges.npy"}]})";
  expect_partition_error(data_.path(), {"edge type '_N:cites:paper'", "unknown destination node type 'paper'"});
  std::ofstream(data_ / "meta.json") << R"({"node_types": [{"name": "_N"}]})";
  expect_partition_error(data_.path(), {"meta.json: node_types[0]", "missing integer 'count'"});
  std::ofstream(data_ / "meta.json") << "{not json";
  expect_partition_error(data_.path(), {"meta.json", "invalid JSON"});
}

TEST_F(CliErrors, BadNumParts) {
  write_small_dataset(data_.path());
  expect_partition_error(data_.path(), {"--num-parts must be at least 1"}, "--num-parts 0");
  expect_partition_error(data_.path(), {"--num-parts 11 is larger than the number of nodes (10)"}, "--num-parts 11");
  expect_partition_error(data_.path(), {"unknown --method 'spectral'"}, "--num-parts 2 --method spectral");
}

TEST_F(CliErrors, MalformedOgbCsv) {
  std::filesystem::create_directories(data_ / "raw");
  write_gz(data_ / "raw/num-node-list.csv.gz", "3\n");
  write_gz(data_ / "raw/edge.csv.gz", "0,1\n1,2\n2,x\n");
  expect_partition_error(data_.path(), {"raw/edge.csv.gz:3", "expected an integer (destination node ID), found 'x'"});
  write_gz(data_ / "raw/edge.csv.gz", "0,1\n1,7\n");
  expect_partition_error(data_.path(), {"destination IDs", "is 7, expected an ID in [0, 3)"});
}

TEST_F(CliErrors, MalformedNTriples) {
  std::ofstream(data_ / "g.nt") << "<a> <p> <b> .\n<a> <p> \"unterminated .\n";
  expect_partition_error(data_.path(), {"g.nt:2", "unterminated literal"});
  std::ofstream(data_ / "g.nt") << "<a> <p> <b>\n";
  expect_partition_error(data_.path(), {"g.nt:1", "expected '.' after the object"});
}

TEST_F(CliErrors, MalformedKnowledgeGraphs) {
  std::ofstream(data_ / "train.txt") << "a\tr\tb\nc\td\n";
  expect_partition_error(data_.path(), {"train.txt:2", "expected 'head<TAB>relation<TAB>tail'"});

  TempDir openke;
  std::ofstream(openke / "entity2id.txt") << "3\na\t0\nb\t1\nc\t2\n";
  std::ofstream(openke / "relation2id.txt") << "1\nr\t0\n";
  std::ofstream(openke / "train2id.txt") << "2\n0 1 0\n0 7 0\n";
  expect_partition_error(openke.path(), {"train2id.txt:3", "entity id 7 is not below the entity count 3"});
  std::ofstream(openke / "entity2id.txt") << "3\na\t0\nb\t1\na\t2\n";
  expect_partition_error(openke.path(), {"entity2id.txt:4", "duplicate name 'a'"});
  // An id far past the names is an error, not an allocation of that many (found by the kg fuzz target).
  std::ofstream(openke / "entity2id.txt") << "3\na\t0\nb\t1\nc\t066666669415209\n";
  expect_partition_error(openke.path(), {"entity2id.txt:4", "id 66666669415209 is not below the file's 3 names"});
  // The count lines OpenKE's files open with: held to the lines that follow, and read as integers.
  std::ofstream(openke / "entity2id.txt") << "4\na\t0\nb\t1\nc\t2\n";
  expect_partition_error(openke.path(), {"entity2id.txt", "first line declares 4 names, file has 3"});
  std::ofstream(openke / "entity2id.txt") << "3\na\t0\nb\t1\nc\t2\n";
  std::ofstream(openke / "train2id.txt") << "3\n0 1 0\n0 2 0\n";
  expect_partition_error(openke.path(), {"train2id.txt", "first line declares 3 triples, file has 2"});
  std::ofstream(openke / "train2id.txt") << "two\n0 1 0\n0 2 0\n";
  expect_partition_error(openke.path(), {"train2id.txt:1", "(triples count)", "'two'"});
}

TEST_F(CliErrors, InspectFindsCorruption) {
  write_small_dataset(data_.path());
  const std::string out = work_ / "parts";
  ASSERT_EQ(run_tessera("partition --input " + data_.path() + " --num-parts 2 --method random --out " + out).exit_code, 0);
  ASSERT_EQ(run_tessera("inspect " + out + "/small.json").exit_code, 0);
  // Two partitions claiming the same original node.
  Array nids = read_npy(out + "/part1/orig_nids.npy");
  Array copy = Array::zeros(DType::kInt64, nids.shape());
  std::copy(nids.data<int64_t>(), nids.data<int64_t>() + nids.numel(), copy.data<int64_t>());
  copy.data<int64_t>()[0] = read_npy(out + "/part0/orig_nids.npy").data<int64_t>()[0];
  write_npy(out + "/part1/orig_nids.npy", copy);
  auto r = run_tessera("inspect " + out + "/small.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("part1/orig_nids.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("appears twice"), std::string::npos) << r.err;
}

TEST_F(CliErrors, PartitionSucceedsAndInspectReportsJson) {
  write_small_dataset(data_.path());
  const std::string out = work_ / "parts";
  auto r = run_tessera("partition --input " + data_.path() + " --num-parts 2 --balance-train --balance-edges --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = run_tessera("inspect --json " + out + "/small.json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  for (const char* key : {"\"num_parts\":2", "\"num_nodes\":10", "\"num_edges\":10", "\"edge_cut_ratio\"", "\"owned_nodes\"",
                          "\"in_edges\"", "\"train_nodes\"", "\"halo_nodes\""})
    EXPECT_NE(j.out.find(key), std::string::npos) << key << " in " << j.out;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// A run killed while writing leaves only a staging directory, never a
// partition under the final name, and the next run clears the leftover.
TEST(StagedOutput, KilledRunLeavesNoValidOutput) {
  TempDir dir;
  ASSERT_EQ(run_tessera("gen products-like --nodes 200000 --edges 2000000 --feat-dim 64 --seed 1 --out " + dir / "g").exit_code, 0);
  const std::string out = dir / "parts";
  const std::string cmd = std::string(TESSERA_BINARY) + " partition --input " + dir / "g" +
                          " --num-parts 2 --method random --out " + out + " >/dev/null 2>&1 & echo $!";
  FILE* p = popen(cmd.c_str(), "r");
  int pid = 0;
  ASSERT_EQ(fscanf(p, "%d", &pid), 1);
  pclose(p);
  // Kill as soon as the staging directory appears (writing has begun).
  bool staged = false;
  for (int i = 0; i < 20000 && !staged; ++i) {
    staged = testing::count_entries_with_prefix(dir.path(), "parts.tessera-tmp-") > 0;
    if (!staged) usleep(500);
  }
  kill(pid, SIGKILL);
  ASSERT_TRUE(staged) << "partition never started writing";
  EXPECT_FALSE(std::filesystem::exists(out)) << "a killed run left output under the final name";
  // The next run succeeds and removes the dead run's staging directory.
  ASSERT_EQ(run_tessera("partition --input " + dir / "g" + " --num-parts 2 --method random --out " + out).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(out + "/products-like.json"));
  EXPECT_EQ(testing::count_entries_with_prefix(dir.path(), "parts.tessera-tmp-"), 0);
}

}  // namespace
}  // namespace tessera
