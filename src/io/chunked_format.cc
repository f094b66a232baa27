// DGL's chunked graph format (see chunked_format.h): metadata.json is read and checked whole up front, so a
// mistake in it is reported before any chunk is opened; chunks are then read one at a time, each checked
// against what metadata.json says of it.
#include "io/chunked_format.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/formats.h"
#include "io/json_file.h"
#include "io/staged_dir.h"
#include "io/text.h"
#include "tessera/base/error.h"
#include "tessera/io/npy.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tessera {
namespace {

// ---- metadata.json ----

const json& require(const json& object, const std::string& key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) fail("{}: missing '{}'", where, key);
  return *it;
}

const json& expect_object(const json& j, const std::string& where) {
  if (!j.is_object()) fail("{}: expected a JSON object, found {}", where, j.dump());
  return j;
}

const json& expect_array(const json& j, const std::string& where) {
  if (!j.is_array()) fail("{}: expected a list, found {}", where, j.dump());
  return j;
}

std::string expect_string(const json& j, const std::string& where) {
  if (!j.is_string()) fail("{}: expected a string, found {}", where, j.dump());
  return j.get<std::string>();
}

int64_t expect_count(const json& j, const std::string& where) {
  if (!j.is_number_integer() || j.get<int64_t>() < 0)
    fail("{}: expected a non-negative integer, found {}", where, j.dump());
  return j.get<int64_t>();
}

int index_of(const std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// Per-type totals, from `per_chunk` (each type's list of chunk sizes, kept in
// `chunks`) or from `per_type`: DGL writes either. Both present must agree.
std::vector<int64_t> read_counts(const json& meta, const std::string& meta_path, const std::string& per_chunk,
                                 const std::string& per_type, const std::string& types_key, size_t types,
                                 std::vector<std::vector<int64_t>>* chunks) {
  chunks->assign(types, {});
  const bool has_chunks = meta.contains(per_chunk), has_totals = meta.contains(per_type);
  if (!has_chunks && !has_totals) {
    if (types == 0) return {};
    fail("{}: missing '{}' (or '{}')", meta_path, per_chunk, per_type);
  }
  auto check_length = [&](const std::string& key) -> const json& {
    const json& list = expect_array(meta[key], meta_path + ": " + key);
    if (list.size() != types)
      fail("{}: {} has {} entries but {} lists {} types", meta_path, key, list.size(), types_key, types);
    return list;
  };
  std::vector<int64_t> totals(types, 0);
  if (has_chunks) {
    const json& list = check_length(per_chunk);
    for (size_t i = 0; i < types; ++i) {
      const std::string where = fmt::format("{}: {}[{}]", meta_path, per_chunk, i);
      for (size_t c = 0; c < expect_array(list[i], where).size(); ++c) {
        (*chunks)[i].push_back(expect_count(list[i][c], fmt::format("{}[{}]", where, c)));
        totals[i] += (*chunks)[i].back();
      }
    }
  }
  if (has_totals) {
    const json& list = check_length(per_type);
    for (size_t i = 0; i < types; ++i) {
      const int64_t total = expect_count(list[i], fmt::format("{}: {}[{}]", meta_path, per_type, i));
      if (has_chunks && total != totals[i])
        fail("{}: {}[{}] is {} but {}[{}] adds up to {}", meta_path, per_type, i, total, per_chunk, i, totals[i]);
      totals[i] = total;
    }
  }
  return totals;
}

// One ChunkFileSpec: {"format": {"name": ..., "delimiter": ...}, "data": [paths]}. Data arrays are numpy only:
// their rows need a dtype and shape, which a CSV or Parquet chunk would have to be guessed from.
ChunkFiles read_spec(const json& spec, const std::string& dir, const std::string& meta_path, const std::string& key,
                     bool csv_allowed) {
  ChunkFiles files;
  files.key = key;
  files.where = meta_path + ": " + key;
  expect_object(spec, files.where);
  const std::string fwhere = files.where + ".format";
  const json& format = expect_object(require(spec, "format", files.where), fwhere);
  files.format = expect_string(require(format, "name", fwhere), fwhere + ".name");
  const std::string convert = csv_allowed ? "numpy or csv" : "numpy";
  if (files.format == "parquet")
    fail("{}: format 'parquet' is not supported; convert the chunks to {}", fwhere, convert);
  if (files.format == "csv" && !csv_allowed)
    fail("{}: format 'csv' is not supported for data arrays; convert the chunks to numpy", fwhere);
  if (files.format != "csv" && files.format != "numpy")
    fail("{}: unknown format '{}' (expected {})", fwhere, files.format, convert);
  if (format.contains("delimiter")) {
    files.delimiter = expect_string(format["delimiter"], fwhere + ".delimiter");
    if (files.delimiter.size() != 1)
      fail("{}.delimiter: expected one character, found '{}'", fwhere, files.delimiter);
  }
  const std::string dwhere = files.where + ".data";
  const json& data = expect_array(require(spec, "data", files.where), dwhere);
  for (size_t c = 0; c < data.size(); ++c) {
    const std::string path = expect_string(data[c], fmt::format("{}[{}]", dwhere, c));
    files.paths.push_back(fs::path(path).is_absolute() ? path : path_join(dir, path));
  }
  // An edge type may have no edges and so no chunks; an array needs one to
  // have a dtype.
  if (!csv_allowed && files.paths.empty()) fail("{}: lists no files", dwhere);
  return files;
}

// node_data / edge_data: type -> name -> spec, every type one of `types`.
std::vector<std::map<std::string, ChunkFiles>> read_data_specs(const json& meta, const std::string& dir,
                                                               const std::string& meta_path, const std::string& key,
                                                               const std::string& types_key,
                                                               const std::vector<std::string>& types) {
  std::vector<std::map<std::string, ChunkFiles>> specs(types.size());
  if (!meta.contains(key)) return specs;
  for (const auto& [type, names] : expect_object(meta[key], meta_path + ": " + key).items()) {
    const std::string type_key = key + "[" + in_quotes(type) + "]";
    const int t = index_of(types, type);
    if (t < 0) fail("{}: {}: unknown type: {} does not list it", meta_path, type_key, types_key);
    for (const auto& [name, spec] : expect_object(names, meta_path + ": " + type_key).items())
      specs[t][name] = read_spec(spec, dir, meta_path, type_key + "[" + in_quotes(name) + "]", false);
  }
  return specs;
}

std::vector<std::string> read_string_list(const json& meta, const std::string& meta_path, const std::string& key) {
  std::vector<std::string> list;
  const json& items = expect_array(require(meta, key, meta_path), meta_path + ": " + key);
  for (size_t i = 0; i < items.size(); ++i)
    list.push_back(expect_string(items[i], fmt::format("{}: {}[{}]", meta_path, key, i)));
  return list;
}

// ---- chunks ----

// The path of chunk `c`, which must exist: a missing chunk is named with the
// entry of metadata.json that lists it.
const std::string& chunk_path(const ChunkFiles& files, size_t c) {
  if (c >= files.paths.size()) fail("{}: there is no chunk {} ({} files listed)", files.where, c, files.paths.size());
  const std::string& path = files.paths[c];
  if (!file_exists(path)) fail("{}: no such file (listed as chunk {} in {})", path, c, files.where);
  return path;
}

// One end of an edge type, for checking IDs.
struct EdgeEnd {
  const char* role;  // "source" / "destination"
  const std::string& type;
  int64_t count;

  void check(int64_t id, const std::string& where, const std::string& chunk) const {
    if (id < 0 || id >= count)
      fail("{}: {} ID {} is out of range for node type '{}' ({} nodes) ({})", where, role, id, type, count, chunk);
  }
};

void read_csv_edges(const std::string& path, const std::string& delimiter, const EdgeEnd& from, const EdgeEnd& to,
                    const std::string& chunk, std::vector<int64_t>* src, std::vector<int64_t>* dst) {
  // A space delimiter also takes tabs and runs of blanks: hand-written and
  // column-aligned files use them.
  const bool blanks = delimiter == " ";
  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(&line)) {
    if (trim(line).empty()) continue;
    split_fields(line, blanks ? " \t" : delimiter, blanks, &fields);
    if (fields.size() != 2)
      fail("{}: expected 'src{}dst', found '{}' ({})", reader.where(), delimiter, std::string(line), chunk);
    src->push_back(parse_int(fields[0], reader.where(), "(source node ID)"));
    dst->push_back(parse_int(fields[1], reader.where(), "(destination node ID)"));
    from.check(src->back(), reader.where(), chunk);
    to.check(dst->back(), reader.where(), chunk);
  }
}

template <typename T>
void append_npy_edges(const Array& a, const std::string& path, const EdgeEnd& from, const EdgeEnd& to,
                      const std::string& chunk, std::vector<int64_t>* src, std::vector<int64_t>* dst) {
  const T* pairs = a.data<T>();
  for (int64_t i = 0; i < a.rows(); ++i) {
    src->push_back(pairs[2 * i]);
    dst->push_back(pairs[2 * i + 1]);
    if (src->back() < 0 || src->back() >= from.count || dst->back() < 0 || dst->back() >= to.count) {
      const std::string where = fmt::format("{}: row {}", path, i);
      from.check(src->back(), where, chunk);
      to.check(dst->back(), where, chunk);
    }
  }
}

void read_npy_edges(const ChunkFiles& files, size_t c, const EdgeEnd& from, const EdgeEnd& to,
                    const std::string& chunk, std::vector<int64_t>* src, std::vector<int64_t>* dst) {
  const Array a = read_data_chunk(files, c);
  const std::string& path = files.paths[c];
  if (a.ndim() != 2 || a.dim(1) != 2)
    fail("{}: expected edges of shape (E, 2), found {} ({})", path, a.shape_string(), chunk);
  if (a.dtype() == DType::kInt64) append_npy_edges<int64_t>(a, path, from, to, chunk, src, dst);
  else if (a.dtype() == DType::kInt32) append_npy_edges<int32_t>(a, path, from, to, chunk, src, dst);
  else fail("{}: edges must be int64 or int32, found {} ({})", path, dtype_name(a.dtype()), chunk);
}

}  // namespace

EdgeTypeName split_edge_type(const std::string& canonical, const std::string& where) {
  std::vector<std::string_view> parts;
  split_fields(canonical, ":", false, &parts);
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty())
    fail("{}: '{}' must have the form src_type:relation:dst_type", where, canonical);
  return {std::string(parts[0]), std::string(parts[1]), std::string(parts[2])};
}

// ---- ChunkedGraph ----

ChunkedGraph ChunkedGraph::load(const std::string& dir) {
  ChunkedGraph g;
  g.dir = dir;
  const std::string meta_path = path_join(dir, "metadata.json");
  const json meta = read_json_file(meta_path, meta_path + ": cannot open (expected DGL's chunked graph metadata)");
  expect_object(meta, meta_path);

  g.graph_name = expect_string(require(meta, "graph_name", meta_path), meta_path + ": graph_name");
  g.node_types = read_string_list(meta, meta_path, "node_type");
  for (size_t t = 0; t < g.node_types.size(); ++t)
    if (index_of(g.node_types, g.node_types[t]) != static_cast<int>(t))
      fail("{}: node_type lists '{}' twice", meta_path, g.node_types[t]);
  // How DGL cut the nodes into chunks matters to its own pipeline only: data
  // chunks carry their row counts.
  std::vector<std::vector<int64_t>> node_chunks;
  g.num_nodes = read_counts(meta, meta_path, "num_nodes_per_chunk", "num_nodes_per_type", "node_type",
                            g.node_types.size(), &node_chunks);

  g.edge_types = meta.contains("edge_type") ? read_string_list(meta, meta_path, "edge_type") : std::vector<std::string>{};
  for (size_t k = 0; k < g.edge_types.size(); ++k) {
    const std::string where = fmt::format("{}: edge_type[{}]", meta_path, k);
    const EdgeTypeName name = split_edge_type(g.edge_types[k], where);
    for (const std::string& end : {name.src, name.dst})
      if (index_of(g.node_types, end) < 0)
        fail("{}: '{}' names node type '{}', which node_type does not list", where, g.edge_types[k], end);
    if (index_of(g.edge_types, g.edge_types[k]) != static_cast<int>(k))
      fail("{}: edge_type lists '{}' twice", meta_path, g.edge_types[k]);
  }
  g.num_edges = read_counts(meta, meta_path, "num_edges_per_chunk", "num_edges_per_type", "edge_type",
                            g.edge_types.size(), &g.edges_per_chunk);

  const json edges = g.edge_types.empty() && !meta.contains("edges")
                         ? json::object()
                         : expect_object(require(meta, "edges", meta_path), meta_path + ": edges");
  for (const auto& [etype, spec] : edges.items())
    if (index_of(g.edge_types, etype) < 0)
      fail("{}: edges[{}]: unknown edge type: edge_type does not list it", meta_path, in_quotes(etype));
  for (size_t k = 0; k < g.edge_types.size(); ++k) {
    const std::string key = "edges[" + in_quotes(g.edge_types[k]) + "]";
    if (!edges.contains(g.edge_types[k]))
      fail("{}: edge type '{}' has no entry in edges", meta_path, g.edge_types[k]);
    g.edges.push_back(read_spec(edges[g.edge_types[k]], dir, meta_path, key, true));
    const std::vector<int64_t>& per_chunk = g.edges_per_chunk[k];
    if (meta.contains("num_edges_per_chunk") && per_chunk.size() != g.edges[k].paths.size())
      fail("{}: num_edges_per_chunk[{}] has {} entries but {}.data lists {} files", meta_path, k, per_chunk.size(),
           key, g.edges[k].paths.size());
  }

  g.node_data = read_data_specs(meta, dir, meta_path, "node_data", "node_type", g.node_types);
  g.edge_data = read_data_specs(meta, dir, meta_path, "edge_data", "edge_type", g.edge_types);
  return g;
}

int ChunkedGraph::node_type_index(const std::string& name) const { return index_of(node_types, name); }

// load() checked the edge types: splitting them cannot fail here.
int ChunkedGraph::src_type(int k) const { return node_type_index(split_edge_type(edge_types.at(k), dir).src); }

int ChunkedGraph::dst_type(int k) const { return node_type_index(split_edge_type(edge_types.at(k), dir).dst); }

int64_t ChunkedGraph::total_nodes() const {
  int64_t n = 0;
  for (int64_t count : num_nodes) n += count;
  return n;
}

int64_t ChunkedGraph::total_edges() const {
  int64_t n = 0;
  for (int64_t count : num_edges) n += count;
  return n;
}

bool is_split_mask(const std::string& name) {
  return std::find(std::begin(kSplitMasks), std::end(kSplitMasks), name) != std::end(kSplitMasks);
}

// ---- chunks ----

void read_edge_chunk(const ChunkedGraph& g, int k, int c, std::vector<int64_t>* src, std::vector<int64_t>* dst) {
  const ChunkFiles& files = g.edges.at(k);
  const std::string& path = chunk_path(files, c);
  const std::string chunk = fmt::format("chunk {} of {}", c, files.key);
  const int s = g.src_type(k), d = g.dst_type(k);
  const EdgeEnd from{"source", g.node_types[s], g.num_nodes[s]};
  const EdgeEnd to{"destination", g.node_types[d], g.num_nodes[d]};
  const size_t first = src->size();
  if (files.format == "csv") read_csv_edges(path, files.delimiter, from, to, chunk, src, dst);
  else read_npy_edges(files, c, from, to, chunk, src, dst);
  const int64_t rows = static_cast<int64_t>(src->size() - first);
  const std::vector<int64_t>& expected = g.edges_per_chunk.at(k);
  if (!expected.empty() && rows != expected.at(c))
    fail("{}: {} has {} edges but metadata.json num_edges_per_chunk says {}", path, chunk, rows, expected[c]);
}

Array read_data_chunk(const ChunkFiles& files, size_t c) {
  const std::string& path = chunk_path(files, c);
  Array a;
  try {
    a = read_npy(path);
  } catch (const Error& e) {
    fail("{} (chunk {} of {})", e.what(), c, files.where);
  }
  if (a.ndim() == 0) fail("{}: a chunk must have at least one dimension (chunk {} of {})", path, c, files.where);
  return a;
}

int64_t data_chunk_rows(const ChunkFiles& files, size_t c) {
  // read_npy maps the file: only the header's page is read.
  return read_data_chunk(files, c).rows();
}

int chunk_reader(int64_t c, int64_t chunks, int ranks) {
  if (chunks < 1 || ranks < 1 || c < 0 || c >= chunks)
    fail("chunk {} of {} cannot be given to one of {} machines", c, chunks, ranks);
  return static_cast<int>(c * ranks / chunks);
}

}  // namespace tessera
