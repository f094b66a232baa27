// OGB's raw directory layouts: the homogeneous node-property layout
// (ogbn-arxiv / ogbn-products) and the heterogeneous one ogbn-mag ships.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "formats.h"
#include "io/gzip_writer.h"
#include "io/staged_dir.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera {
namespace {

std::vector<int64_t> read_int_column(const std::string& path, const char* what) {
  std::vector<int64_t> values;
  LineReader reader(path);
  std::string_view line;
  while (reader.next(&line)) {
    if (trim(line).empty()) continue;
    values.push_back(parse_int(line, reader.where(), what));
  }
  return values;
}

// Room reserved up front for at most this many values: the count comes from
// another file, and a corrupt one must not become a huge allocation before
// any row is seen (past it, vectors grow as rows arrive).
constexpr int64_t kMaxReservedValues = int64_t{1} << 26;

// Labels: one per line; "nan" or empty (unlabelled nodes, as in ogbn-mag's
// non-paper types) become -1.
Array read_labels(const std::string& path, int64_t count) {
  std::vector<int64_t> labels;
  labels.reserve(static_cast<size_t>(std::min(count, kMaxReservedValues)));
  LineReader reader(path);
  std::string_view line;
  while (reader.next(&line)) {
    std::string_view t = trim(line);
    if (t.empty() || t == "nan" || t == "NaN") labels.push_back(-1);
    else labels.push_back(parse_int(t, reader.where(), "(class label)"));
  }
  if (static_cast<int64_t>(labels.size()) != count)
    fail("{}: {} labels, expected one per node ({})", path, labels.size(), count);
  return Array::from_vector(labels);
}

Array read_features(const std::string& path, int64_t count) {
  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  std::vector<float> values;
  int64_t dim = -1;
  int64_t rows = 0;
  while (reader.next(&line)) {
    split_fields(line, ",", false, &fields);
    if (dim < 0) {
      dim = static_cast<int64_t>(fields.size());
      values.reserve(static_cast<size_t>(std::min(dim * std::min(count, kMaxReservedValues), kMaxReservedValues)));
    }
    if (static_cast<int64_t>(fields.size()) != dim)
      fail("{}: {} features, expected {} like the first line", reader.where(), fields.size(), dim);
    for (auto f : fields) values.push_back(parse_float(f, reader.where(), "(feature)"));
    ++rows;
  }
  if (rows != count) fail("{}: {} feature rows, expected one per node ({})", path, rows, count);
  Array a = Array::zeros(DType::kFloat32, {count, std::max<int64_t>(dim, 0)});
  std::copy(values.begin(), values.end(), a.data<float>());
  return a;
}

// split/<kind>: the one present, or the one asked for.
std::string split_dir(const std::string& dir, const std::string& wanted, const std::string& sub) {
  const std::string root = path_join(dir, "split");
  if (!wanted.empty()) {
    const std::string p = path_join(path_join(root, wanted), sub);
    if (!fs::is_directory(p)) fail("{}: no such split (--split {})", p, wanted);
    return p;
  }
  std::vector<std::string> kinds;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory()) kinds.push_back(entry.path().filename().string());
  if (kinds.empty()) return "";
  if (kinds.size() > 1) {
    std::sort(kinds.begin(), kinds.end());
    fail("{}: several splits ({}); choose one with --split", root, fmt::join(kinds, ", "));
  }
  return path_join(path_join(root, kinds[0]), sub);
}

void read_split(const std::string& dir, NodeType* t) {
  if (dir.empty()) return;
  for (auto [name, ids] : {std::pair{"train", &t->train}, {"valid", &t->val}, {"test", &t->test}}) {
    const std::string p = path_join(dir, std::string(name) + ".csv.gz");
    if (file_exists(p)) *ids = Array::from_vector(read_int_column(p, "(node ID)"));
  }
}

int64_t read_single_count(const std::string& path) {
  auto v = read_int_column(path, "(count)");
  if (v.size() != 1) fail("{}: expected one count (a single graph), found {} lines", path, v.size());
  if (v[0] < 0) fail("{}: the count is {}, expected a number >= 0", path, v[0]);
  return v[0];
}

}  // namespace

Dataset read_ogb_node(const std::string& dir, const ReadOptions& options) {
  Dataset d;
  NodeType t;
  t.name = "_N";
  t.count = read_single_count(path_join(dir, "raw/num-node-list.csv.gz"));
  const std::string feat = path_join(dir, "raw/node-feat.csv.gz");
  if (file_exists(feat)) t.data["feat"] = read_features(feat, t.count);
  const std::string label = path_join(dir, "raw/node-label.csv.gz");
  if (file_exists(label)) t.data["label"] = read_labels(label, t.count);
  read_split(split_dir(dir, options.split, ""), &t);
  EdgeType e{"_N", "_E", "_N", {}, {}, {}};
  read_edge_csv(path_join(dir, "raw/edge.csv.gz"), &e);
  const std::string num_edges = path_join(dir, "raw/num-edge-list.csv.gz");
  if (file_exists(num_edges) && read_single_count(num_edges) != e.count())
    fail("{}: says {} edges, raw/edge.csv.gz has {}", num_edges, read_single_count(num_edges), e.count());
  d.node_types.push_back(std::move(t));
  d.edge_types.push_back(std::move(e));
  return d;
}

Dataset read_ogb_mag(const std::string& dir, const ReadOptions& options) {
  Dataset d;
  {
    const std::string p = path_join(dir, "raw/num-node-dict.csv.gz");
    LineReader reader(p);
    std::string_view line;
    std::vector<std::string_view> fields;
    if (!reader.next(&line)) fail("{}: empty (expected a header row of node types)", p);
    split_fields(line, ",", false, &fields);
    for (auto f : fields) d.node_types.push_back(NodeType{std::string(trim(f)), 0, {}, {}, {}, {}, {}});
    if (!reader.next(&line)) fail("{}: missing the row of node counts", p);
    split_fields(line, ",", false, &fields);
    if (fields.size() != d.node_types.size())
      fail("{}: {} counts for {} node types", reader.where(), fields.size(), d.node_types.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      d.node_types[i].count = parse_int(fields[i], reader.where(), "(node count)");
      if (d.node_types[i].count < 0)
        fail("{}: node type '{}' has count {}, expected a number >= 0", reader.where(), d.node_types[i].name,
             d.node_types[i].count);
    }
  }
  const std::string split_root = split_dir(dir, options.split, "");
  for (NodeType& t : d.node_types) {
    const std::string feat = path_join(dir, "raw/node-feat/" + t.name + "/node-feat.csv.gz");
    if (file_exists(feat)) t.data["feat"] = read_features(feat, t.count);
    const std::string label = path_join(dir, "raw/node-label/" + t.name + "/node-label.csv.gz");
    if (file_exists(label)) t.data["label"] = read_labels(label, t.count);
    const std::string year = path_join(dir, "raw/node_year/" + t.name + "/node_year.csv.gz");
    if (file_exists(year)) {
      Array y = Array::from_vector(read_int_column(year, "(year)"));
      if (y.numel() != t.count) fail("{}: {} years, expected one per node ({})", year, y.numel(), t.count);
      t.data["year"] = y;
    }
    if (!split_root.empty()) {
      const std::string sub = path_join(split_root, t.name);
      if (fs::is_directory(sub)) read_split(sub, &t);
    }
  }
  const std::string triplets = path_join(dir, "raw/triplet-type-list.csv.gz");
  LineReader reader(triplets);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(&line)) {
    if (trim(line).empty()) continue;
    split_fields(line, ",", false, &fields);
    if (fields.size() != 3) fail("{}: expected 'src_type,relation,dst_type', found '{}'", reader.where(), std::string(line));
    EdgeType e{std::string(trim(fields[0])), std::string(trim(fields[1])), std::string(trim(fields[2])), {}, {}, {}};
    const std::string rel_dir = path_join(dir, "raw/relations/" + e.src_type + "___" + e.relation + "___" + e.dst_type);
    read_edge_csv(path_join(rel_dir, "edge.csv.gz"), &e);
    const std::string num_edges = path_join(rel_dir, "num-edge-list.csv.gz");
    if (file_exists(num_edges) && read_single_count(num_edges) != e.count())
      fail("{}: says {} edges, edge.csv.gz has {}", num_edges, read_single_count(num_edges), e.count());
    d.edge_types.push_back(std::move(e));
  }
  return d;
}

namespace {

void write_column(const std::string& path, const int64_t* values, int64_t n) {
  GzipWriter w(path);
  for (int64_t i = 0; i < n; ++i) w.write(fmt::format("{}\n", values[i]));
  w.close();
}

void write_features(const std::string& path, const Array& feat) {
  GzipWriter w(path);
  const float* p = feat.data<float>();
  const int64_t dim = feat.dim(1);
  fmt::memory_buffer line;
  for (int64_t i = 0; i < feat.dim(0); ++i) {
    line.clear();
    for (int64_t j = 0; j < dim; ++j) {
      if (j > 0) line.push_back(',');
      fmt::format_to(std::back_inserter(line), "{}", p[i * dim + j]);
    }
    line.push_back('\n');
    w.write(std::string_view(line.data(), line.size()));
  }
  w.close();
}

void write_edges(const std::string& path, const EdgeType& e) {
  GzipWriter w(path);
  const int64_t* s = e.src.data<int64_t>();
  const int64_t* t = e.dst.data<int64_t>();
  for (int64_t i = 0; i < e.count(); ++i) w.write(fmt::format("{},{}\n", s[i], t[i]));
  w.close();
}

void write_single(const std::string& path, int64_t value) { write_column(path, &value, 1); }

void write_split(const std::string& dir, const NodeType& t) {
  for (auto [name, ids] : {std::pair{"train", &t.train}, {"valid", &t.val}, {"test", &t.test}})
    if (!ids->empty_handle()) write_column(path_join(dir, std::string(name) + ".csv.gz"), ids->data<int64_t>(), ids->numel());
}

void write_node_data(const StagedDirectory& out, const NodeType& t, const std::string& feat_path,
                     const std::string& label_path, const std::string& year_path) {
  auto feat = t.data.find("feat");
  if (feat != t.data.end()) write_features(path_join(out.subdir(feat_path), "node-feat.csv.gz"), feat->second);
  auto label = t.data.find("label");
  if (label != t.data.end())
    write_column(path_join(out.subdir(label_path), "node-label.csv.gz"), label->second.data<int64_t>(), t.count);
  auto year = t.data.find("year");
  if (year != t.data.end() && !year_path.empty())
    write_column(path_join(out.subdir(year_path), "node_year.csv.gz"), year->second.data<int64_t>(), t.count);
}

}  // namespace

void write_ogb_dataset(const Dataset& d, const std::string& dir, const std::string& split_kind) {
  d.validate("dataset to write");
  StagedDirectory out(dir);
  const std::string raw = out.subdir("raw");
  if (d.node_types.size() == 1 && d.edge_types.size() == 1) {
    const NodeType& t = d.node_types[0];
    write_single(path_join(raw, "num-node-list.csv.gz"), t.count);
    write_single(path_join(raw, "num-edge-list.csv.gz"), d.edge_types[0].count());
    write_edges(path_join(raw, "edge.csv.gz"), d.edge_types[0]);
    write_node_data(out, t, "raw", "raw", "");
    write_split(out.subdir("split/" + split_kind), t);
  } else {
    std::string header, counts;
    for (const NodeType& t : d.node_types) {
      header += (header.empty() ? "" : ",") + t.name;
      counts += (counts.empty() ? "" : ",") + std::to_string(t.count);
      write_node_data(out, t, "raw/node-feat/" + t.name, "raw/node-label/" + t.name, "raw/node_year/" + t.name);
      if (!t.train.empty_handle()) write_split(out.subdir("split/" + split_kind + "/" + t.name), t);
    }
    GzipWriter nodes(path_join(raw, "num-node-dict.csv.gz"));
    nodes.write(header + "\n" + counts + "\n");
    nodes.close();
    GzipWriter triplets(path_join(raw, "triplet-type-list.csv.gz"));
    for (const EdgeType& e : d.edge_types) {
      triplets.write(e.src_type + "," + e.relation + "," + e.dst_type + "\n");
      const std::string rel = out.subdir("raw/relations/" + e.src_type + "___" + e.relation + "___" + e.dst_type);
      write_edges(path_join(rel, "edge.csv.gz"), e);
      write_single(path_join(rel, "num-edge-list.csv.gz"), e.count());
    }
    triplets.close();
  }
  out.commit();
}

}  // namespace tessera
