// DGL's chunked graph format: a graph written by hand as DGL documents it, the generators' chunked layout
// against their Tessera layout, the errors a broken chunked graph gives, and `tessera partition` on one.
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "io/chunked_format.h"
#include "tessera/base/error.h"
#include "tessera/io/dataset_io.h"
#include "tessera/io/npy.h"
#include "dataset_compare.h"
#include "test_util.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::run_tessera;
using testing::TempDir;
using testing::expect_same_dataset;

template <typename T>
Array array_of(const std::vector<T>& values, std::vector<int64_t> shape) {
  Array a = Array::zeros(dtype_of<T>(), std::move(shape));
  EXPECT_EQ(a.numel(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), a.data<T>());
  return a;
}

Array bools(const std::vector<int>& values) {
  Array a = Array::zeros(DType::kBool, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.data<bool>()[i] = values[i] != 0;
  return a;
}

void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void replace_in_file(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = read_file(path);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  text.replace(at, from.size(), to);
  write_text(path, text);
}

// The small heterogeneous graph below, in DGL's words (metadata.json keys as
// DGL's docs spell them). Its chunks are cut differently for each array: the
// format only asks that an array's rows add up to its type's count.
//   paper  7 nodes: feat[i] = (10i, 10i + 1), label[i] = i % 3, train {0, 2, 5}, val {1, 6}
//   author 5 nodes: age[i] = 20 + i
//   author:writes:paper  (0,1) (1,2) (4,6) | (2,3) (3,0)       CSV, space-delimited
//   paper:cites:paper    (0,1) (1,2) (2,3) (6,0) | (5,4)       numpy int64, then int32 at an absolute path
//                        weight[i] = i / 2
void write_hand_dataset(const std::string& dir) {
  write_text(dir + "/edges/writes-0.csv", "0 1\n1  2\n   \n4 6\n");
  write_text(dir + "/edges/writes-1.csv", "2\t3\n3 0\n");
  fs::create_directories(dir + "/edges");
  write_npy(dir + "/edges/cites-0.npy", array_of<int64_t>({0, 1, 1, 2, 2, 3, 6, 0}, {4, 2}));
  fs::create_directories(dir + "/elsewhere");
  write_npy(dir + "/elsewhere/cites-1.npy", array_of<int32_t>({5, 4}, {1, 2}));

  fs::create_directories(dir + "/node_data");
  std::vector<float> feat;
  for (int i = 0; i < 7; ++i) feat.insert(feat.end(), {10.0f * i, 10.0f * i + 1});
  write_npy(dir + "/node_data/paper-feat-0.npy", array_of(std::vector<float>(feat.begin(), feat.begin() + 4), {2, 2}));
  write_npy(dir + "/node_data/paper-feat-1.npy", array_of(std::vector<float>(feat.begin() + 4, feat.end()), {5, 2}));
  write_npy(dir + "/node_data/paper-label.npy", array_of<int64_t>({0, 1, 2, 0, 1, 2, 0}, {7}));
  write_npy(dir + "/node_data/paper-train-0.npy", bools({1, 0, 1}));
  write_npy(dir + "/node_data/paper-train-1.npy", bools({0, 0, 1, 0}));
  write_npy(dir + "/node_data/paper-val.npy", array_of<int32_t>({0, 1, 0, 0, 0, 0, 1}, {7}));
  write_npy(dir + "/node_data/author-age-0.npy", array_of<int32_t>({20}, {1}));
  write_npy(dir + "/node_data/author-age-1.npy", array_of<int32_t>({21}, {1}));
  write_npy(dir + "/node_data/author-age-2.npy", array_of<int32_t>({22, 23, 24}, {3}));
  fs::create_directories(dir + "/edge_data");
  write_npy(dir + "/edge_data/cites-weight-0.npy", array_of<float>({0.0f, 0.5f}, {2}));
  write_npy(dir + "/edge_data/cites-weight-1.npy", array_of<float>({1.0f, 1.5f, 2.0f}, {3}));

  std::string meta = R"({
  "graph_name": "hand",
  "node_type": ["paper", "author"],
  "num_nodes_per_chunk": [[4, 3], [2, 3]],
  "edge_type": ["author:writes:paper", "paper:cites:paper"],
  "num_edges_per_chunk": [[3, 2], [4, 1]],
  "edges": {
    "author:writes:paper": {"format": {"name": "csv", "delimiter": " "},
                            "data": ["edges/writes-0.csv", "edges/writes-1.csv"]},
    "paper:cites:paper": {"format": {"name": "numpy"}, "data": ["edges/cites-0.npy", "@DIR@/elsewhere/cites-1.npy"]}
  },
  "node_data": {
    "paper": {
      "feat": {"format": {"name": "numpy"}, "data": ["node_data/paper-feat-0.npy", "node_data/paper-feat-1.npy"]},
      "label": {"format": {"name": "numpy"}, "data": ["node_data/paper-label.npy"]},
      "train_mask": {"format": {"name": "numpy"},
                     "data": ["node_data/paper-train-0.npy", "node_data/paper-train-1.npy"]},
      "val_mask": {"format": {"name": "numpy"}, "data": ["node_data/paper-val.npy"]}
    },
    "author": {"age": {"format": {"name": "numpy"},
                       "data": ["node_data/author-age-0.npy", "node_data/author-age-1.npy",
                                "node_data/author-age-2.npy"]}}
  },
  "edge_data": {
    "paper:cites:paper": {"weight": {"format": {"name": "numpy"},
                                     "data": ["edge_data/cites-weight-0.npy", "edge_data/cites-weight-1.npy"]}}
  }
}
)";
  meta.replace(meta.find("@DIR@"), 5, dir);
  write_text(dir + "/metadata.json", meta);
}

std::vector<int64_t> ids_of(const Array& a) {
  if (a.empty_handle()) return {};
  return std::vector<int64_t>(a.data<int64_t>(), a.data<int64_t>() + a.numel());
}

void expect_edges(const EdgeType& e, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  EXPECT_EQ(ids_of(e.src), src) << e.canonical();
  EXPECT_EQ(ids_of(e.dst), dst) << e.canonical();
}

// Every node's data, every edge and its data, as write_hand_dataset wrote them.
void expect_hand_dataset(const Dataset& d) {
  EXPECT_EQ(d.name, "hand");
  ASSERT_EQ(d.node_types.size(), 2u);
  const NodeType& paper = d.node_types[0];
  const NodeType& author = d.node_types[1];
  EXPECT_EQ(paper.name, "paper");
  EXPECT_EQ(paper.count, 7);
  EXPECT_EQ(author.name, "author");
  EXPECT_EQ(author.count, 5);

  ASSERT_EQ(paper.data.size(), 2u) << "the masks are the split, not data";
  const Array& feat = paper.data.at("feat");
  ASSERT_EQ(feat.shape(), (std::vector<int64_t>{7, 2}));
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(feat.data<float>()[2 * i], 10.0f * i) << i;
    EXPECT_EQ(feat.data<float>()[2 * i + 1], 10.0f * i + 1) << i;
    EXPECT_EQ(paper.data.at("label").data<int64_t>()[i], i % 3) << i;
  }
  EXPECT_EQ(ids_of(paper.train), (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(ids_of(paper.val), (std::vector<int64_t>{1, 6}));
  EXPECT_TRUE(paper.test.empty_handle());
  const Array& age = author.data.at("age");
  ASSERT_EQ(age.shape(), (std::vector<int64_t>{5}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(age.data<int32_t>()[i], 20 + i) << i;
  EXPECT_TRUE(author.train.empty_handle());

  ASSERT_EQ(d.edge_types.size(), 2u);
  EXPECT_EQ(d.edge_types[0].canonical(), "author:writes:paper");
  expect_edges(d.edge_types[0], {0, 1, 4, 2, 3}, {1, 2, 6, 3, 0});
  EXPECT_TRUE(d.edge_types[0].data.empty());
  EXPECT_EQ(d.edge_types[1].canonical(), "paper:cites:paper");
  expect_edges(d.edge_types[1], {0, 1, 2, 6, 5}, {1, 2, 3, 0, 4});
  const Array& weight = d.edge_types[1].data.at("weight");
  ASSERT_EQ(weight.shape(), (std::vector<int64_t>{5}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(weight.data<float>()[i], 0.5f * i) << i;
}

TEST(Chunked, HandWrittenDglGraph) {
  TempDir dir;
  write_hand_dataset(dir.path());
  EXPECT_EQ(detect_format(dir.path()), "chunked");
  expect_hand_dataset(read_chunked_dataset(dir.path()));
  expect_hand_dataset(read_dataset(dir.path()));

  const ChunkedGraph g = ChunkedGraph::load(dir.path());
  EXPECT_EQ(g.total_nodes(), 12);
  EXPECT_EQ(g.total_edges(), 10);
  EXPECT_EQ(g.src_type(0), 1);
  EXPECT_EQ(g.dst_type(0), 0);
  EXPECT_EQ(data_chunk_rows(g.node_data[0].at("feat"), 1), 5);
  std::vector<int64_t> src, dst;
  read_edge_chunk(g, 0, 1, &src, &dst);  // one chunk alone, as a machine reads its share
  EXPECT_EQ(src, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dst, (std::vector<int64_t>{3, 0}));
}

// DGL writes the counts either per chunk or per type.
TEST(Chunked, CountsPerType) {
  TempDir dir;
  write_hand_dataset(dir.path());
  const std::string meta = dir / "metadata.json";
  replace_in_file(meta, R"("num_nodes_per_chunk": [[4, 3], [2, 3]])", R"("num_nodes_per_type": [7, 5])");
  replace_in_file(meta, R"("num_edges_per_chunk": [[3, 2], [4, 1]])", R"("num_edges_per_type": [5, 5])");
  expect_hand_dataset(read_chunked_dataset(dir.path()));
  EXPECT_TRUE(ChunkedGraph::load(dir.path()).edges_per_chunk[0].empty());
}

// The hand-written graph written back in more chunks than some types have
// rows, with a relation name used twice (so edge files carry the type index).
TEST(Chunked, WriteReadRoundTrip) {
  TempDir dir;
  write_hand_dataset(dir / "in");
  Dataset d = read_chunked_dataset(dir / "in");
  EdgeType back;
  back.src_type = "paper";
  back.relation = "writes";
  back.dst_type = "author";
  back.src = d.edge_types[0].dst;
  back.dst = d.edge_types[0].src;
  d.edge_types.push_back(back);
  write_chunked_dataset(d, dir / "out", 6);
  EXPECT_TRUE(fs::exists(dir / "out/edges/0-writes-5.npy"));
  EXPECT_TRUE(fs::exists(dir / "out/edges/2-writes-0.npy"));
  EXPECT_TRUE(fs::exists(dir / "out/node_data/paper-train_mask-0.npy"));
  const nlohmann::json meta = nlohmann::json::parse(read_file(dir / "out/metadata.json"));
  // Rows [c * n / 6, (c + 1) * n / 6) of every type's n.
  EXPECT_EQ(meta["num_nodes_per_chunk"][0], nlohmann::json({1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(meta["num_nodes_per_chunk"][1], nlohmann::json({0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(meta["num_edges_per_chunk"][0].size(), 6u);

  Dataset r = read_chunked_dataset(dir / "out");
  const EdgeType extra = r.edge_types.back();
  expect_edges(extra, ids_of(back.src), ids_of(back.dst));
  r.edge_types.pop_back();
  expect_hand_dataset(r);
  EXPECT_THROW(write_chunked_dataset(d, dir / "bad", 0), Error);
}

TEST(Chunked, ChunkReaderTakesContiguousBlocks) {
  std::vector<int> readers;
  for (int c = 0; c < 4; ++c) readers.push_back(chunk_reader(c, 4, 2));
  EXPECT_EQ(readers, (std::vector<int>{0, 0, 1, 1}));
  readers.clear();
  for (int c = 0; c < 2; ++c) readers.push_back(chunk_reader(c, 2, 4));
  EXPECT_EQ(readers, (std::vector<int>{0, 2}));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(chunk_reader(c, 3, 3), c);
}

// `tessera gen --layout chunked` holds what `--layout tessera` holds.
TEST(Chunked, GeneratorsChunkedLayoutMatchesTesseraLayout) {
  TempDir dir;
  for (const std::string kind : {"rmat", "mag-like"}) {
    const std::string gen = "gen " + kind + " --nodes 3000 --edges 20000 --feat-dim 8 --seed 5 --out ";
    const std::string chunked = dir / (kind + "-chunked"), plain = dir / (kind + "-tessera");
    const auto r = run_tessera(gen + chunked + " --layout chunked --num-chunks 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(run_tessera(gen + plain).exit_code, 0);
    const nlohmann::json meta = nlohmann::json::parse(read_file(chunked + "/metadata.json"));
    for (const auto& per_type : meta["num_edges_per_chunk"]) EXPECT_EQ(per_type.size(), 3u) << kind;
    EXPECT_EQ(detect_format(chunked), "chunked");
    const Dataset from_chunks = read_chunked_dataset(chunked), from_plain = read_dataset(plain);
    expect_same_dataset(from_chunks, from_plain);
    EXPECT_EQ(from_chunks.name, from_plain.name);
    for (size_t k = 0; k < from_chunks.edge_types.size() && k < from_plain.edge_types.size(); ++k) {
      const EdgeType& x = from_chunks.edge_types[k];
      ASSERT_EQ(x.data.size(), from_plain.edge_types[k].data.size()) << x.canonical();
      for (const auto& [key, array] : x.data)
        testing::expect_same_array(array, from_plain.edge_types[k].data.at(key), x.canonical() + "." + key);
    }
  }
  const auto wrong = run_tessera("gen rmat --nodes 100 --edges 400 --num-chunks 2 --out " + (dir / "x"));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("--num-chunks applies to --layout chunked only"), std::string::npos) << wrong.err;
}

// The message read_chunked_dataset(dir) fails with, or "no error".
std::string read_error(const std::string& dir) {
  try {
    read_chunked_dataset(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(Chunked, ErrorsNameTheFileAndKey) {
  const std::string writes = R"(edges["author:writes:paper"])";
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    fs::remove(dir / "edges/writes-1.csv");
    const std::string e = read_error(dir.path());
    EXPECT_CONTAINS(e, dir / "edges/writes-1.csv: no such file");
    EXPECT_CONTAINS(e, "chunk 1 in " + (dir / "metadata.json: ") + writes);
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    write_text(dir / "edges/writes-1.csv", "2 3\n");
    EXPECT_CONTAINS(read_error(dir.path()), dir / "edges/writes-1.csv: chunk 1 of " + writes +
                                                " has 1 edges but metadata.json num_edges_per_chunk says 2");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    write_text(dir / "edges/writes-0.csv", "0 1\n1  2\n   \n4 7\n");
    EXPECT_CONTAINS(read_error(dir.path()), dir / "edges/writes-0.csv:4: destination ID 7 is out of range for node "
                                                  "type 'paper' (7 nodes)");
    write_hand_dataset(dir.path());
    write_npy(dir / "edges/cites-0.npy", array_of<int64_t>({0, 1, 1, 2, 2, 3, 6, -1}, {4, 2}));
    EXPECT_CONTAINS(read_error(dir.path()), dir / "edges/cites-0.npy: row 3: destination ID -1 is out of range");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    replace_in_file(dir / "metadata.json", R"("edge_type": ["author:writes:paper")",
                    R"("edge_type": ["author:writes:venue")");
    EXPECT_CONTAINS(read_error(dir.path()), dir / "metadata.json: edge_type[0]: 'author:writes:venue' names node "
                                                  "type 'venue', which node_type does not list");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    replace_in_file(dir / "metadata.json", R"("author": {"age")", R"("writer": {"age")");
    EXPECT_CONTAINS(read_error(dir.path()), dir / R"(metadata.json: node_data["writer"]: unknown type)");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    replace_in_file(dir / "metadata.json", R"("name": "csv")", R"("name": "parquet")");
    EXPECT_CONTAINS(read_error(dir.path()), dir / "metadata.json: " + writes + ".format: format 'parquet' is not "
                                                  "supported; convert the chunks to numpy or csv");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    replace_in_file(dir / "metadata.json", "[[3, 2], [4, 1]]", "[[3, 2, 0], [4, 1]]");
    EXPECT_CONTAINS(read_error(dir.path()), dir / "metadata.json: num_edges_per_chunk[0] has 3 entries but " + writes +
                                                  ".data lists 2 files");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    write_npy(dir / "node_data/paper-feat-1.npy", Array::zeros(DType::kFloat32, {4, 2}));
    EXPECT_CONTAINS(read_error(dir.path()), dir / R"(metadata.json: node_data["paper"]["feat"]: its chunks hold 6 )"
                                                  "rows but node type 'paper' has 7 nodes");
    write_npy(dir / "node_data/paper-feat-1.npy", Array::zeros(DType::kFloat32, {5, 3}));
    EXPECT_CONTAINS(read_error(dir.path()), "do not match chunk 0's");
  }
  {
    TempDir dir;
    write_hand_dataset(dir.path());
    const std::string meta = dir / "metadata.json";
    replace_in_file(meta, R"("num_edges_per_chunk": [[3, 2], [4, 1]])", R"("num_edges_per_type": [5, 5])");
    write_text(dir / "edges/writes-1.csv", "2 3\n");
    EXPECT_CONTAINS(read_error(dir.path()), meta + ": " + writes + ": its chunks hold 4 edges but "
                                                   "num_edges_per_type[0] says 5");
  }
}

// A chunked graph is partitioned like any other dataset: detected, read whole.
TEST(Chunked, PartitionCommandReadsChunkedInput) {
  TempDir dir;
  const std::string in = dir / "mag", out = dir / "parts";
  auto r = run_tessera("gen mag-like --nodes 3000 --edges 20000 --feat-dim 8 --seed 2 --layout chunked "
                       "--num-chunks 2 --out " + in);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_tessera("partition --input " + in + " --num-parts 2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_tessera("inspect " + out + "/mag-like.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;

  write_hand_dataset(dir / "hand");
  r = run_tessera("partition --input " + (dir / "hand") + " --num-parts 2 --method random --out " + (dir / "hp"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run_tessera("inspect " + (dir / "hp/hand.json")).exit_code, 0);
}

}  // namespace
}  // namespace tessera
