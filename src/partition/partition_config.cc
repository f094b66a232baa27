#include "io/json_file.h"
#include "tessera/partition/partition_config.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tessera/base/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tessera {
namespace {

const json& field(const json& j, const std::string& key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail("{}: missing field '{}'", where, key);
  return *it;
}

// An integer in [lo, hi]. get<int64_t>() alone would convert a float or an
// out-of-range number without a word (1e300 is undefined behaviour).
int64_t integer(const json& v, const std::string& where, int64_t lo, int64_t hi) {
  bool in_range = false;
  if (v.is_number_unsigned())  // JSON's non-negative integers
    in_range = v.get<uint64_t>() <= static_cast<uint64_t>(hi) && static_cast<int64_t>(v.get<uint64_t>()) >= lo;
  else if (v.is_number_integer())
    in_range = v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  if (!in_range) fail("{}: expected an integer in [{}, {}], found {}", where, lo, hi, v.dump());
  return v.get<int64_t>();
}

std::vector<std::string> names_by_index(const json& j, const std::string& where) {
  if (!j.is_object() || j.empty()) fail("{}: expected an object of name -> type id (at least one type)", where);
  std::vector<std::string> names(j.size());
  for (auto& [name, id] : j.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<size_t>() >= names.size() || !names[id.get<size_t>()].empty())
      fail("{}: type ids must be 0..{} without repeats (at '{}')", where, j.size() - 1, name);
    names[id.get<size_t>()] = name;
  }
  return names;
}

// Checks that the per-type ranges tile [0, total) partition-major, type-minor.
void check_tiling(const std::vector<std::vector<IdRange>>& map, int num_parts, int64_t total, const std::string& where) {
  int64_t next = 0;
  for (int p = 0; p < num_parts; ++p)
    for (size_t t = 0; t < map.size(); ++t) {
      const IdRange& r = map[t][p];
      if (r.first != next || r.second < r.first)
        fail("{}: range [{}, {}) of type {} in partition {} does not continue at {}", where, r.first, r.second, t, p, next);
      next = r.second;
    }
  if (next != total) fail("{}: ranges cover [0, {}), expected [0, {})", where, next, total);
}

std::vector<std::vector<IdRange>> read_map(const json& j, const std::vector<std::string>& types, int num_parts,
                                           const std::string& where) {
  std::vector<std::vector<IdRange>> map;
  for (const auto& t : types) {
    const json& ranges = field(j, t, where);
    if (!ranges.is_array() || static_cast<int>(ranges.size()) != num_parts)
      fail("{}.{}: expected {} [start, end) ranges", where, t, num_parts);
    map.emplace_back();
    for (const json& r : ranges) {
      if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer())
        fail("{}.{}: expected [start, end) pairs of integers", where, t);
      map.back().emplace_back(r[0].get<int64_t>(), r[1].get<int64_t>());
    }
  }
  return map;
}

std::map<std::string, std::map<std::string, ArraySchema>> read_schema(const json& j, const std::string& where) {
  std::map<std::string, std::map<std::string, ArraySchema>> schema;
  for (auto& [type, fields] : j.items())
    for (auto& [name, s] : fields.items()) {
      const std::string at = where + "." + type + "." + name + ".shape";
      if (!s.at("shape").is_array()) fail("{}: expected a list of dimensions", at);
      std::vector<int64_t> shape;
      for (const json& d : s.at("shape")) shape.push_back(integer(d, at, 0, INT64_MAX));
      schema[type][name] = ArraySchema{dtype_from_name(s.at("dtype").get<std::string>()), std::move(shape)};
    }
  return schema;
}

json write_schema(const std::map<std::string, std::map<std::string, ArraySchema>>& schema) {
  json j = json::object();
  for (const auto& [type, fields] : schema)
    for (const auto& [name, s] : fields) j[type][name] = {{"dtype", dtype_name(s.dtype)}, {"shape", s.row_shape}};
  return j;
}

}  // namespace

PartitionConfig PartitionConfig::load(const std::string& json_path) {
  const json j = read_json_file(json_path, json_path + ": cannot open partition config");
  PartitionConfig c;
  c.dir = fs::path(json_path).parent_path().string();
  if (c.dir.empty()) c.dir = ".";
  const std::string& w = json_path;
  try {
    c.graph_name = field(j, "graph_name", w).get<std::string>();
    c.part_method = j.value("part_method", "");
    c.num_parts = static_cast<int>(integer(field(j, "num_parts", w), w + ": num_parts", 1, INT_MAX));
    if (j.contains("halo_hops")) c.halo_hops = static_cast<int>(integer(j["halo_hops"], w + ": halo_hops", 0, INT_MAX));
    c.num_nodes = integer(field(j, "num_nodes", w), w + ": num_nodes", 0, INT64_MAX);
    c.num_edges = integer(field(j, "num_edges", w), w + ": num_edges", 0, INT64_MAX);
    c.ntypes = names_by_index(field(j, "ntypes", w), w + ": ntypes");
    c.etypes = names_by_index(field(j, "etypes", w), w + ": etypes");
    c.node_map = read_map(field(j, "node_map", w), c.ntypes, c.num_parts, w + ": node_map");
    c.edge_map = read_map(field(j, "edge_map", w), c.etypes, c.num_parts, w + ": edge_map");
    if (j.contains("node_feat_schema")) c.node_feat_schema = read_schema(j["node_feat_schema"], w + ": node_feat_schema");
    if (j.contains("edge_feat_schema")) c.edge_feat_schema = read_schema(j["edge_feat_schema"], w + ": edge_feat_schema");
    if (j.contains("extra")) c.extra = j["extra"].get<std::map<std::string, std::string>>();
    if (j.contains("held_out_edges"))
      c.held_out_edges = j["held_out_edges"].get<std::map<std::string, std::string>>();
    if (j.contains("node_names")) c.node_names = j["node_names"].get<std::map<std::string, std::string>>();
    c.relation_names = j.value("relation_names", "");
    for (int p = 0; p < c.num_parts; ++p) {
      const json& jp = field(j, "part-" + std::to_string(p), w);
      const std::string pw = w + ": part-" + std::to_string(p);
      c.parts.push_back({field(jp, "node_feats", pw).get<std::string>(), field(jp, "edge_feats", pw).get<std::string>(),
                         field(jp, "part_graph", pw).get<std::string>(), field(jp, "orig_nids", pw).get<std::string>(),
                         field(jp, "orig_eids", pw).get<std::string>()});
    }
  } catch (const json::exception& e) {
    fail("{}: field of the wrong type: {}", w, e.what());
  }
  check_tiling(c.node_map, c.num_parts, c.num_nodes, w + ": node_map");
  check_tiling(c.edge_map, c.num_parts, c.num_edges, w + ": edge_map");
  for (const auto& et : c.etypes) {
    size_t a = et.find(':'), b = et.rfind(':');
    if (a == std::string::npos || a == b) fail("{}: etype '{}' is not of the form src:rel:dst", w, et);
    for (const std::string& nt : {et.substr(0, a), et.substr(b + 1)})
      if (std::find(c.ntypes.begin(), c.ntypes.end(), nt) == c.ntypes.end())
        fail("{}: etype '{}' names unknown node type '{}'", w, et, nt);
  }
  c.build_index();
  return c;
}

std::string PartitionConfig::to_json() const {
  json j;
  j["graph_name"] = graph_name;
  j["part_method"] = part_method;
  j["num_parts"] = num_parts;
  j["halo_hops"] = halo_hops;
  j["num_nodes"] = num_nodes;
  j["num_edges"] = num_edges;
  for (size_t t = 0; t < ntypes.size(); ++t) {
    j["ntypes"][ntypes[t]] = t;
    for (const auto& r : node_map[t]) j["node_map"][ntypes[t]].push_back({r.first, r.second});
  }
  j["etypes"] = json::object();
  j["edge_map"] = json::object();
  for (size_t t = 0; t < etypes.size(); ++t) {
    j["etypes"][etypes[t]] = t;
    for (const auto& r : edge_map[t]) j["edge_map"][etypes[t]].push_back({r.first, r.second});
  }
  j["node_feat_schema"] = write_schema(node_feat_schema);
  j["edge_feat_schema"] = write_schema(edge_feat_schema);
  if (!extra.empty()) j["extra"] = extra;
  if (!held_out_edges.empty()) j["held_out_edges"] = held_out_edges;
  if (!node_names.empty()) j["node_names"] = node_names;
  if (!relation_names.empty()) j["relation_names"] = relation_names;
  for (int p = 0; p < num_parts; ++p) {
    const PartitionFiles& f = parts[p];
    j["part-" + std::to_string(p)] = {{"node_feats", f.node_feats}, {"edge_feats", f.edge_feats}, {"part_graph", f.part_graph},
                                      {"orig_nids", f.orig_nids}, {"orig_eids", f.orig_eids}};
  }
  return j.dump(1) + "\n";
}

std::string PartitionConfig::path(const std::string& relative) const { return (fs::path(dir) / relative).string(); }

void PartitionConfig::build_index() {
  part_node_starts_.assign(num_parts + 1, 0);
  for (int p = 0; p < num_parts; ++p) part_node_starts_[p + 1] = node_map.back()[p].second;
  part_node_starts_[0] = node_map.front()[0].first;
}

IdRange PartitionConfig::part_nodes(int part) const { return {part_node_starts_[part], part_node_starts_[part + 1]}; }

IdRange PartitionConfig::part_edges(int part) const { return {edge_map.front()[part].first, edge_map.back()[part].second}; }

int PartitionConfig::node_owner(int64_t node_id) const {
  auto it = std::upper_bound(part_node_starts_.begin() + 1, part_node_starts_.end(), node_id);
  return static_cast<int>(it - part_node_starts_.begin()) - 1;
}

int PartitionConfig::node_type_of(int64_t node_id) const {
  const int p = node_owner(node_id);
  for (size_t t = 0; t < ntypes.size(); ++t)
    if (node_id < node_map[t][p].second) return static_cast<int>(t);
  return -1;
}

int PartitionConfig::etype_src(int etype) const {
  const std::string& e = etypes[etype];
  return static_cast<int>(std::find(ntypes.begin(), ntypes.end(), e.substr(0, e.find(':'))) - ntypes.begin());
}

int PartitionConfig::etype_dst(int etype) const {
  const std::string& e = etypes[etype];
  return static_cast<int>(std::find(ntypes.begin(), ntypes.end(), e.substr(e.rfind(':') + 1)) - ntypes.begin());
}

int64_t PartitionConfig::etype_count(int etype) const {
  int64_t n = 0;
  for (const IdRange& r : edge_map[etype]) n += r.second - r.first;
  return n;
}

std::vector<std::string> PartitionConfig::labelled_types_without_in_edges() const {
  std::vector<std::string> found;
  for (size_t t = 0; t < ntypes.size(); ++t) {
    const auto schema = node_feat_schema.find(ntypes[t]);
    if (schema == node_feat_schema.end() || !schema->second.count("train_mask")) continue;
    bool reached = false;
    for (size_t e = 0; e < etypes.size() && !reached; ++e)
      reached = etype_dst(static_cast<int>(e)) == static_cast<int>(t) && etype_count(static_cast<int>(e)) > 0;
    if (!reached) found.push_back(ntypes[t]);
  }
  return found;
}

std::string PartitionConfig::without_in_edges_warning(const std::string& ntype) {
  return fmt::format(
      "warning: labelled node type '{}' has no incoming edge of any type, so message passing never reaches it "
      "and a model sees only its own input; add the inverse relations (tessera partition --add-reverse; RDF input "
      "has them unless --no-reverse is given)",
      ntype);
}

}  // namespace tessera
