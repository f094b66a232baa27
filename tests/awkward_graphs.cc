#include "awkward_graphs.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/graph/dataset.h"
#include "tessera/io/dataset_io.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// Raw mt19937 draws, so the graphs do not depend on the library's
// distributions.
struct Draw {
  std::mt19937 engine;
  explicit Draw(uint32_t seed) : engine(seed) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(engine() % static_cast<uint32_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
};

// Node features that carry the label, so a model has something to learn.
Array label_features(const std::vector<int64_t>& labels, int64_t width, Draw& draw) {
  const int64_t n = static_cast<int64_t>(labels.size());
  Array feat = Array::zeros(DType::kFloat32, {n, width});
  float* f = feat.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < width; ++j)
      f[i * width + j] = static_cast<float>(draw.below(100)) / 200.0f + (j == labels[i] % width ? 1.0f : 0.0f);
  return feat;
}

EdgeType edges(const std::string& src, const std::string& rel, const std::string& dst,
               const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  EdgeType e;
  e.src_type = src;
  e.relation = rel;
  e.dst_type = dst;
  e.src = Array::from_vector(s);
  e.dst = Array::from_vector(d);
  return e;
}

void write_molecules(const std::string& dir) {
  fs::create_directories(dir);
  Draw draw(7);
  const std::string ns = "http://example.org/mol#";
  const std::string type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>";
  std::ofstream nt(dir + "/graph.nt");
  std::vector<std::pair<std::string, std::string>> labelled;  // compound IRI, class
  int64_t atoms = 0;
  for (int c = 0; c < 120; ++c) {
    const std::string compound = fmt::format("<{}c{}>", ns, c);
    const bool active = draw.chance(40);
    labelled.push_back({fmt::format("{}c{}", ns, c), active ? "active" : "inactive"});
    nt << compound << " " << type << " <" << ns << "Compound> .\n";
    if (c % 10 == 9) continue;  // a compound with nothing but its type
    const int n = 2 + static_cast<int>(draw.below(4));
    for (int k = 0; k < n; ++k) {
      const std::string atom = fmt::format("<{}a{}>", ns, atoms++);
      const char* element = active && draw.chance(50) ? "O" : (draw.chance(50) ? "C" : "H");
      nt << compound << " <" << ns << "hasAtom> " << atom << " .\n";
      nt << atom << " " << type << " <" << ns << "Atom> .\n";
      nt << atom << " <" << ns << "element> <" << ns << "el_" << element << "> .\n";
      if (k > 0) {
        const std::string bond = fmt::format("<{}b{}_{}>", ns, c, k);
        nt << compound << " <" << ns << "hasBond> " << bond << " .\n";
        nt << bond << " " << type << " <" << ns << "Bond> .\n";
        nt << bond << " <" << ns << "inBond> " << atom << " .\n";
      }
    }
  }
  // A relation with a single triple.
  nt << "<" << ns << "c0> <" << ns << "discoveredBy> <" << ns << "lab1> .\n";
  for (const auto& [file, first, last] : {std::tuple{"trainingSet.tsv", 0, 80}, {"testSet.tsv", 80, 120}}) {
    std::ofstream tsv(dir + "/" + file);
    tsv << "id\tlabel\n";
    for (int i = first; i < last; ++i) tsv << labelled[i].first << "\t" << labelled[i].second << "\n";
  }
}

void write_sparse_hetero(const std::string& dir) {
  Draw draw(11);
  Dataset d;
  d.name = "sparse-hetero";
  const int64_t papers = 150, authors = 60;
  std::vector<int64_t> labels(papers);
  for (int64_t& l : labels) l = draw.below(3);
  NodeType paper{"paper", papers, {}, {}, {}, {}, {}};
  paper.data["feat"] = label_features(labels, 8, draw);
  paper.data["label"] = Array::from_vector(labels);
  std::vector<int64_t> train, val, test;
  for (int64_t i = 0; i < papers; ++i) {
    if (labels[i] == 0 && train.size() < 2) train.push_back(i);  // two training nodes, one class
    else if (i % 3 == 0) val.push_back(i);
    else if (i % 3 == 1) test.push_back(i);
  }
  paper.train = Array::from_vector(train);
  paper.val = Array::from_vector(val);
  paper.test = Array::from_vector(test);
  d.node_types.push_back(std::move(paper));
  d.node_types.push_back(NodeType{"author", authors, {}, {}, {}, {}, {}});
  d.node_types.push_back(NodeType{"venue", 1, {}, {}, {}, {}, {}});  // one node: absent from a partition
  std::vector<int64_t> ws, wd, cs, cd;
  for (int64_t i = 0; i < papers - 30; ++i) {  // the last 30 papers are isolated
    ws.push_back(draw.below(authors));
    wd.push_back(i);
    if (i > 0) {
      cs.push_back(i);
      cd.push_back(draw.below(i));
    }
  }
  d.edge_types.push_back(edges("author", "writes", "paper", ws, wd));
  d.edge_types.push_back(edges("paper", "cites", "paper", cs, cd));
  d.edge_types.push_back(edges("paper", "published_in", "venue", {3}, {0}));  // one edge
  write_tessera_dataset(d, dir);
}

// One homogeneous node type "_N" with 3 classes and label-bearing features.
void write_homogeneous(const std::string& dir, bool isolated) {
  Draw draw(isolated ? 13 : 17);
  Dataset d;
  d.name = isolated ? "isolated" : "one-class";
  const int64_t n = isolated ? 200 : 120;
  std::vector<int64_t> labels(n);
  for (int64_t& l : labels) l = draw.below(3);
  NodeType t{"_N", n, {}, {}, {}, {}, {}};
  t.data["feat"] = label_features(labels, 8, draw);
  std::vector<int64_t> train, val, test, s, dst;
  if (isolated) {
    for (int64_t e = 0; e < 400; ++e) {  // nodes 100..199 have no edge
      s.push_back(draw.below(100));
      dst.push_back(draw.below(100));
    }
    train.push_back(150);  // the only training node, itself isolated
    for (int64_t i = 0; i < n; ++i)
      if (i != 150) (i % 2 ? val : test).push_back(i);
  } else {
    for (int64_t e = 0; e < 300; ++e) {
      const int64_t u = 6 + draw.below(n - 6), v = 6 + draw.below(n - 6);
      s.push_back(u);
      dst.push_back(v);
      if (e % 10 == 0) {  // a duplicate edge and a self-loop
        s.push_back(u);
        dst.push_back(v);
        s.push_back(u);
        dst.push_back(u);
      }
    }
    s.push_back(5);  // node 5's only edge points at itself
    dst.push_back(5);
    for (int64_t i = 0; i < n; ++i) {
      if (labels[i] == 1 && train.size() < 40) train.push_back(i);
      else (i % 2 ? val : test).push_back(i);
    }
  }
  t.data["label"] = Array::from_vector(labels);
  t.train = Array::from_vector(train);
  t.val = Array::from_vector(val);
  t.test = Array::from_vector(test);
  d.node_types.push_back(std::move(t));
  d.edge_types.push_back(edges("_N", "_E", "_N", s, dst));
  write_tessera_dataset(d, dir);
}

void write_kg_rare(const std::string& dir) {
  fs::create_directories(dir);
  Draw draw(19);
  const int entities = 60;  // 50..59 occur in no triple
  std::ofstream ents(dir + "/entities.dict"), rels(dir + "/relations.dict");
  for (int e = 0; e < entities; ++e) ents << e << "\te" << e << "\n";
  for (int r = 0; r < 3; ++r) rels << r << "\tr" << r << "\n";
  auto triple = [&](int r) { return fmt::format("{}\t{}\t{}\n", draw.below(50), r, draw.below(50)); };
  std::ofstream train(dir + "/train.txt"), valid(dir + "/valid.txt"), test(dir + "/test.txt");
  for (int i = 0; i < 300; ++i) train << triple(0);
  train << triple(1);  // relation 1: one triple
  for (int i = 0; i < 10; ++i) valid << triple(0);
  for (int i = 0; i < 10; ++i) test << triple(0);
  for (int i = 0; i < 2; ++i) test << triple(2);  // relation 2: never trained
}

}  // namespace

std::vector<AwkwardGraph> hetero_graphs() {
  return {{"molecules", "labelled type only a subject, a relation with one triple, featureless types"},
          {"sparse-hetero", "a one-node type, two training nodes of one class, isolated papers"}};
}

std::vector<AwkwardGraph> homogeneous_graphs() {
  return {{"isolated", "half the nodes isolated, one (isolated) training node"},
          {"one-class", "training nodes of one class, self-loops, duplicate edges"}};
}

std::vector<AwkwardGraph> knowledge_graphs() {
  return {{"kg-rare", "a relation with one triple, a relation only in the test set, entities without triples"}};
}

void write_awkward_graph(const AwkwardGraph& graph, const std::string& dir) {
  const std::string path = dir + "/" + graph.name;
  if (graph.name == "molecules") return write_molecules(path);
  if (graph.name == "sparse-hetero") return write_sparse_hetero(path);
  if (graph.name == "isolated") return write_homogeneous(path, true);
  if (graph.name == "one-class") return write_homogeneous(path, false);
  if (graph.name == "kg-rare") return write_kg_rare(path);
  fail("no awkward graph named '{}'", graph.name);
}

}  // namespace tessera::testing
