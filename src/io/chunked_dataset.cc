// Whole datasets in DGL's chunked graph format (see chunked_format.h): read
// into one process, every chunk with its checks; written with each array
// cut into near-equal contiguous chunks, split lists as masks, all of it
// staged and renamed into place at once.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/chunked_format.h"
#include "io/formats.h"
#include "io/json_file.h"
#include "io/staged_dir.h"
#include "tessera/base/error.h"
#include "tessera/io/npy.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tessera {
namespace {

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
