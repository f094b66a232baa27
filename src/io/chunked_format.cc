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

constexpr const char* kSplitMasks[] = {"train_mask", "val_mask", "test_mask"};

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

struct EdgeTypeName {
  std::string src, relation, dst;
};

// "src:rel:dst", the only spelling of an edge type the format has.
EdgeTypeName split_edge_type(const std::string& canonical, const std::string& where) {
  std::vector<std::string_view> parts;
  split_fields(canonical, ":", false, &parts);
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[2].empty())
    fail("{}: '{}' must have the form src_type:relation:dst_type", where, canonical);
  return {std::string(parts[0]), std::string(parts[1]), std::string(parts[2])};
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

// Every chunk of one array, rows in order; `owner` says whose rows they are
// ("node type 'paper' has 100 nodes") for the count check.
Array concat_chunks(const ChunkFiles& files, int64_t expected_rows, const std::string& owner) {
  std::vector<Array> chunks;
  int64_t rows = 0;
  for (size_t c = 0; c < files.paths.size(); ++c) {
    chunks.push_back(read_data_chunk(files, c));
    const Array& a = chunks.back();
    const Array& first = chunks.front();
    if (a.dtype() != first.dtype() || !std::equal(a.shape().begin() + 1, a.shape().end(), first.shape().begin() + 1,
                                                  first.shape().end()))
      fail("{}: dtype {} and shape {} do not match chunk 0's {} and {} (chunk {} of {})", files.paths[c],
           dtype_name(a.dtype()), a.shape_string(), dtype_name(first.dtype()), first.shape_string(), c, files.where);
    rows += a.rows();
  }
  if (rows != expected_rows) fail("{}: its chunks hold {} rows but {}", files.where, rows, owner);
  // One file: keep it mapped, as the other readers do, instead of copying.
  if (chunks.size() == 1) return chunks[0];
  std::vector<int64_t> shape = chunks[0].shape();
  shape[0] = rows;
  Array out = Array::uninitialized(chunks[0].dtype(), shape);
  char* at = static_cast<char*>(out.mutable_raw());
  for (const Array& a : chunks) {
    if (a.nbytes() > 0) std::memcpy(at, a.raw(), a.nbytes());
    at += a.nbytes();
  }
  return out;
}

template <typename T>
Array nonzero_ids(const Array& mask) {
  std::vector<int64_t> ids;
  const T* m = mask.data<T>();
  for (int64_t i = 0; i < mask.rows(); ++i)
    if (m[i]) ids.push_back(i);
  return Array::from_vector(ids);
}

// A split mask (nonzero = in the set) as the IDs of its members.
Array mask_to_ids(const Array& mask, const std::string& where) {
  if (mask.ndim() != 1) fail("{}: a split mask must be one-dimensional, found shape {}", where, mask.shape_string());
  switch (mask.dtype()) {
    case DType::kBool: return nonzero_ids<bool>(mask);
    case DType::kUInt8: return nonzero_ids<uint8_t>(mask);
    case DType::kInt32: return nonzero_ids<int32_t>(mask);
    case DType::kInt64: return nonzero_ids<int64_t>(mask);
    default: fail("{}: a split mask must be bool, uint8, int32 or int64, found {}", where, dtype_name(mask.dtype()));
  }
}

// The ID list a split mask's name stands for (NodeType or const NodeType).
template <typename Node>
auto* split_of(Node* t, const std::string& mask_name) {
  if (mask_name == "train_mask") return &t->train;
  if (mask_name == "val_mask") return &t->val;
  return &t->test;
}

// ---- writing ----

// Names as file-name pieces: anything but letters, digits and "_.-"
// becomes '_' (RDF relations are URIs).
std::string file_safe(const std::string& name) {
  std::string out = name;
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') ch = '_';
  return out;
}

// `stems` made file-safe and, when two coincide, each prefixed with its
// position so that no two arrays share files.
std::vector<std::string> distinct_stems(const std::vector<std::string>& stems) {
  std::vector<std::string> safe;
  for (const std::string& s : stems) safe.push_back(file_safe(s));
  if (std::set<std::string>(safe.begin(), safe.end()).size() == safe.size()) return safe;
  for (size_t i = 0; i < safe.size(); ++i) safe[i] = std::to_string(i) + "-" + safe[i];
  return safe;
}

// First row of piece c of n rows cut into k near-equal contiguous pieces.
int64_t piece_begin(int64_t n, int c, int k) { return static_cast<int64_t>(c) * n / k; }

std::vector<int64_t> piece_sizes(int64_t n, int k) {
  std::vector<int64_t> sizes;
  for (int c = 0; c < k; ++c) sizes.push_back(piece_begin(n, c + 1, k) - piece_begin(n, c, k));
  return sizes;
}

std::string chunk_file(const std::string& stem, int c) { return fmt::format("{}-{}.npy", stem, c); }

json numpy_spec(const std::vector<std::string>& files) {
  return json{{"format", {{"name", "numpy"}}}, {"data", files}};
}

// Writes `a` as k chunk files `<rel_stem>-<c>.npy` under `root`; returns the spec naming them.
json write_array_chunks(const std::string& root, const std::string& rel_stem, const Array& a, int k) {
  std::vector<std::string> files;
  for (int c = 0; c < k; ++c) {
    files.push_back(chunk_file(rel_stem, c));
    write_npy(path_join(root, files.back()), a.slice_rows(piece_begin(a.rows(), c, k), piece_begin(a.rows(), c + 1, k)));
  }
  return numpy_spec(files);
}

json write_edge_chunks(const std::string& root, const std::string& rel_stem, const EdgeType& e, int k) {
  const int64_t* src = e.src.data<int64_t>();
  const int64_t* dst = e.dst.data<int64_t>();
  std::vector<std::string> files;
  for (int c = 0; c < k; ++c) {
    const int64_t begin = piece_begin(e.count(), c, k), end = piece_begin(e.count(), c + 1, k);
    Array pairs = Array::uninitialized(DType::kInt64, {end - begin, 2});
    int64_t* p = pairs.data<int64_t>();
    for (int64_t i = begin; i < end; ++i) {
      *p++ = src[i];
      *p++ = dst[i];
    }
    files.push_back(chunk_file(rel_stem, c));
    write_npy(path_join(root, files.back()), pairs);
  }
  return numpy_spec(files);
}

Array ids_to_mask(const Array& ids, int64_t count) {
  Array mask = Array::zeros(DType::kBool, {count});
  const int64_t* id = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) mask.data<bool>()[id[i]] = true;
  return mask;
}

// The per-node arrays the format holds for `t`: its data and its split as masks.
std::map<std::string, Array> node_arrays(const NodeType& t) {
  std::map<std::string, Array> arrays = t.data;
  for (const char* mask : kSplitMasks) {
    if (t.data.count(mask))
      fail("node type '{}': data named '{}' would be read back as the split; rename it", t.name, mask);
    const Array& ids = *split_of(&t, mask);
    if (!ids.empty_handle()) arrays[mask] = ids_to_mask(ids, t.count);
  }
  return arrays;
}

void warn_left_out(const Dataset& d, const std::string& dir) {
  std::vector<std::string> left;
  for (const NodeType& t : d.node_types)
    if (!t.names.empty()) left.push_back(fmt::format("the names of node type '{}'", t.name));
  for (const auto& [key, array] : d.extra) left.push_back(fmt::format("dataset array '{}'", key));
  if (!d.relation_names.empty()) left.push_back("the relation names");
  if (!left.empty())
    fmt::print(stderr, "warning: {}: the chunked format has no place for {}; they are left out\n", dir,
               fmt::join(left, ", "));
}

}  // namespace

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

// ---- whole datasets ----

Dataset read_chunked_dataset(const std::string& dir) {
  const ChunkedGraph g = ChunkedGraph::load(dir);
  Dataset d;
  d.name = g.graph_name;
  for (size_t t = 0; t < g.node_types.size(); ++t) {
    NodeType nt;
    nt.name = g.node_types[t];
    nt.count = g.num_nodes[t];
    const std::string owner = fmt::format("node type '{}' has {} nodes", nt.name, nt.count);
    for (const auto& [name, files] : g.node_data[t]) {
      const Array a = concat_chunks(files, nt.count, owner);
      if (is_split_mask(name)) *split_of(&nt, name) = mask_to_ids(a, files.where);
      else nt.data[name] = a;
    }
    d.node_types.push_back(std::move(nt));
  }
  for (size_t k = 0; k < g.edge_types.size(); ++k) {
    const EdgeTypeName name = split_edge_type(g.edge_types[k], dir);
    EdgeType e;
    e.src_type = name.src;
    e.relation = name.relation;
    e.dst_type = name.dst;
    std::vector<int64_t> src, dst;
    for (size_t c = 0; c < g.edges[k].paths.size(); ++c) read_edge_chunk(g, static_cast<int>(k), c, &src, &dst);
    // With num_edges_per_type only, the chunks were not checked one by one.
    if (static_cast<int64_t>(src.size()) != g.num_edges[k])
      fail("{}: its chunks hold {} edges but num_edges_per_type[{}] says {}", g.edges[k].where, src.size(), k,
           g.num_edges[k]);
    e.src = Array::from_vector(src);
    e.dst = Array::from_vector(dst);
    const std::string owner = fmt::format("edge type '{}' has {} edges", g.edge_types[k], e.count());
    for (const auto& [data_name, files] : g.edge_data[k]) e.data[data_name] = concat_chunks(files, e.count(), owner);
    d.edge_types.push_back(std::move(e));
  }
  d.validate(dir);
  return d;
}

void write_chunked_dataset(const Dataset& d, const std::string& dir, int num_chunks) {
  if (num_chunks < 1) fail("{}: the number of chunks (--num-chunks) must be at least 1, found {}", dir, num_chunks);
  d.validate("dataset to write");
  warn_left_out(d, dir);
  StagedDirectory out(dir);
  const std::string root = out.path();
  json meta;
  meta["graph_name"] = d.name;

  meta["node_type"] = json::array();
  meta["num_nodes_per_chunk"] = json::array();
  std::vector<std::pair<const NodeType*, std::map<std::string, Array>>> node_data;
  std::vector<std::string> node_stems;
  for (const NodeType& t : d.node_types) {
    meta["node_type"].push_back(t.name);
    meta["num_nodes_per_chunk"].push_back(piece_sizes(t.count, num_chunks));
    node_data.emplace_back(&t, node_arrays(t));
    for (const auto& [name, array] : node_data.back().second) node_stems.push_back(t.name + "-" + name);
  }

  meta["edge_type"] = json::array();
  meta["num_edges_per_chunk"] = json::array();
  meta["edges"] = json::object();
  std::vector<std::string> relations, edge_data_stems;
  for (size_t k = 0; k < d.edge_types.size(); ++k) {
    relations.push_back(d.edge_types[k].relation);
    for (const auto& [name, array] : d.edge_types[k].data) edge_data_stems.push_back(fmt::format("{}-{}", k, name));
  }
  const std::vector<std::string> edge_stems = distinct_stems(relations);
  if (!d.edge_types.empty()) out.subdir("edges");
  for (size_t k = 0; k < d.edge_types.size(); ++k) {
    const EdgeType& e = d.edge_types[k];
    meta["edge_type"].push_back(e.canonical());
    meta["num_edges_per_chunk"].push_back(piece_sizes(e.count(), num_chunks));
    meta["edges"][e.canonical()] = write_edge_chunks(root, "edges/" + edge_stems[k], e, num_chunks);
  }

  // Every array is cut as its type is, so chunk c of each covers the same nodes / edges.
  meta["node_data"] = json::object();
  const std::vector<std::string> node_files = distinct_stems(node_stems);
  if (!node_files.empty()) out.subdir("node_data");
  size_t i = 0;
  for (const auto& [t, arrays] : node_data)
    for (const auto& [name, array] : arrays)
      meta["node_data"][t->name][name] = write_array_chunks(root, "node_data/" + node_files[i++], array, num_chunks);

  meta["edge_data"] = json::object();
  const std::vector<std::string> edge_data_files = distinct_stems(edge_data_stems);
  if (!edge_data_files.empty()) out.subdir("edge_data");
  i = 0;
  for (const EdgeType& e : d.edge_types)
    for (const auto& [name, array] : e.data)
      meta["edge_data"][e.canonical()][name] =
          write_array_chunks(root, "edge_data/" + edge_data_files[i++], array, num_chunks);

  write_text_file(path_join(root, "metadata.json"), meta.dump(2) + "\n");
  out.commit();
}

}  // namespace tessera
