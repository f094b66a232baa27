// The Tessera dataset directory: meta.json naming every array file.
//
// {"name": "g",
//  "node_types": [{"name": "paper", "count": 10,
//                  "feat": "paper/feat.npy", "label": "paper/label.npy",
//                  "train": "paper/train.npy", "val": ..., "test": ...,
//                  "data": {"year": "paper/year.npy"}, "names": "paper/names.txt"}],
//  "edge_types": [{"etype": "paper:cites:paper", "edges": "edges/0.npy",   // int64 [2, E] or CSV
//                  "data": {"w": "edges/0_w.npy"}}],
//  "extra": {"valid_triples": "extra/valid_triples.npy"},
//  "relation_names": "relations.txt"}
#include <filesystem>

#include <nlohmann/json.hpp>

#include "formats.h"
#include "io/json_file.h"
#include "tessera/io/npy.h"
#include "io/staged_dir.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tessera {
namespace {

std::vector<std::string> read_names(const std::string& path) {
  std::vector<std::string> names;
  LineReader reader(path);
  std::string_view line;
  while (reader.next(&line)) names.emplace_back(line);
  return names;
}

std::string field_string(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail("{}: missing '{}'", where, key);
  if (!it->is_string()) fail("{}: '{}' must be a string", where, key);
  return it->get<std::string>();
}

}  // namespace

void read_edge_csv(const std::string& path, EdgeType* e) {
  std::vector<int64_t> src, dst;
  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(&line)) {
    if (trim(line).empty()) continue;
    split_fields(line, ",", false, &fields);
    if (fields.size() != 2) fail("{}: expected 'src,dst', found '{}'", reader.where(), std::string(line));
    src.push_back(parse_int(fields[0], reader.where(), "(source node ID)"));
    dst.push_back(parse_int(fields[1], reader.where(), "(destination node ID)"));
  }
  e->src = Array::from_vector(src);
  e->dst = Array::from_vector(dst);
}

Dataset read_tessera_dir(const std::string& dir) {
  const std::string meta_path = path_join(dir, "meta.json");
  const json meta = read_json_file(meta_path, meta_path + ": cannot open");
  if (!meta.is_object()) fail("{}: expected a JSON object", meta_path);
  auto file = [&](const std::string& rel) { return path_join(dir, rel); };

  Dataset d;
  d.name = meta.value("name", "");
  if (!meta.contains("node_types") || !meta["node_types"].is_array())
    fail("{}: missing 'node_types' (a list)", meta_path);
  for (size_t i = 0; i < meta["node_types"].size(); ++i) {
    const json& jt = meta["node_types"][i];
    const std::string where = fmt::format("{}: node_types[{}]", meta_path, i);
    NodeType t;
    t.name = field_string(jt, "name", where);
    if (!jt.contains("count") || !jt["count"].is_number_integer()) fail("{}: missing integer 'count'", where);
    t.count = jt["count"].get<int64_t>();
    if (jt.contains("feat")) t.data["feat"] = read_npy_checked(file(field_string(jt, "feat", where)), DType::kFloat32, 2, where + ".feat");
    if (jt.contains("label")) t.data["label"] = read_npy_checked(file(field_string(jt, "label", where)), DType::kInt64, 1, where + ".label");
    if (jt.contains("data")) {
      for (auto& [key, value] : jt["data"].items()) {
        if (!value.is_string()) fail("{}.data.{}: expected a file name", where, key);
        t.data[key] = read_npy(file(value.get<std::string>()));
      }
    }
    for (auto [key, ids] : {std::pair{"train", &t.train}, {"val", &t.val}, {"test", &t.test}})
      if (jt.contains(key)) *ids = read_npy_checked(file(field_string(jt, key, where)), DType::kInt64, 1, where + "." + key);
    if (jt.contains("names")) t.names = read_names(file(field_string(jt, "names", where)));
    d.node_types.push_back(std::move(t));
  }
  if (meta.contains("edge_types")) {
    if (!meta["edge_types"].is_array()) fail("{}: 'edge_types' must be a list", meta_path);
    for (size_t i = 0; i < meta["edge_types"].size(); ++i) {
      const json& je = meta["edge_types"][i];
      const std::string where = fmt::format("{}: edge_types[{}]", meta_path, i);
      const std::string etype = field_string(je, "etype", where);
      EdgeType e;
      size_t c1 = etype.find(':');
      size_t c2 = c1 == std::string::npos ? c1 : etype.find(':', c1 + 1);
      if (c2 == std::string::npos || etype.find(':', c2 + 1) != std::string::npos)
        fail("{}: etype '{}' must have the form src_type:relation:dst_type", where, etype);
      e.src_type = etype.substr(0, c1);
      e.relation = etype.substr(c1 + 1, c2 - c1 - 1);
      e.dst_type = etype.substr(c2 + 1);
      const std::string edges = file(field_string(je, "edges", where));
      if (ends_with(edges, ".npy")) {
        Array a = read_npy_checked(edges, DType::kInt64, 2, where + ".edges");
        if (a.dim(0) != 2) fail("{}: {}.edges must have shape (2, E), found {}", edges, where, a.shape_string());
        e.src = a.sub(0);
        e.dst = a.sub(1);
      } else {
        read_edge_csv(edges, &e);
      }
      if (je.contains("data"))
        for (auto& [key, value] : je["data"].items()) {
          if (!value.is_string()) fail("{}.data.{}: expected a file name", where, key);
          e.data[key] = read_npy(file(value.get<std::string>()));
        }
      d.edge_types.push_back(std::move(e));
    }
  }
  if (meta.contains("extra"))
    for (auto& [key, value] : meta["extra"].items()) {
      if (!value.is_string()) fail("{}: extra.{}: expected a file name", meta_path, key);
      d.extra[key] = read_npy(file(value.get<std::string>()));
    }
  if (meta.contains("relation_names")) d.relation_names = read_names(file(field_string(meta, "relation_names", meta_path)));
  return d;
}

void write_tessera_dataset(const Dataset& d, const std::string& dir) {
  d.validate("dataset to write");
  StagedDirectory out(dir);
  json meta;
  meta["name"] = d.name;
  meta["node_types"] = json::array();
  for (const NodeType& t : d.node_types) {
    const std::string sub = out.subdir("nodes/" + t.name);
    const std::string rel = "nodes/" + t.name + "/";
    json jt{{"name", t.name}, {"count", t.count}};
    for (const auto& [key, array] : t.data) {
      write_npy(path_join(sub, key + ".npy"), array);
      if (key == "feat" && array.dtype() == DType::kFloat32 && array.ndim() == 2) jt["feat"] = rel + "feat.npy";
      else if (key == "label") jt["label"] = rel + "label.npy";
      else jt["data"][key] = rel + key + ".npy";
    }
    for (auto [key, ids] : {std::pair{"train", &t.train}, {"val", &t.val}, {"test", &t.test}})
      if (!ids->empty_handle()) {
        write_npy(path_join(sub, std::string(key) + ".npy"), *ids);
        jt[key] = rel + key + ".npy";
      }
    if (!t.names.empty()) {
      write_lines(path_join(sub, "names.txt"), t.names);
      jt["names"] = rel + "names.txt";
    }
    meta["node_types"].push_back(jt);
  }
  meta["edge_types"] = json::array();
  for (size_t i = 0; i < d.edge_types.size(); ++i) {
    const EdgeType& e = d.edge_types[i];
    const std::string sub = out.subdir("edges");
    const std::string base = std::to_string(i);
    NpyWriter writer(path_join(sub, base + ".npy"), DType::kInt64, {2, e.count()});
    writer.append(e.src.raw(), e.src.nbytes());
    writer.append(e.dst.raw(), e.dst.nbytes());
    writer.finish();
    json je{{"etype", e.canonical()}, {"edges", "edges/" + base + ".npy"}};
    for (const auto& [key, array] : e.data) {
      write_npy(path_join(sub, base + "_" + key + ".npy"), array);
      je["data"][key] = "edges/" + base + "_" + key + ".npy";
    }
    meta["edge_types"].push_back(je);
  }
  for (const auto& [key, array] : d.extra) {
    write_npy(path_join(out.subdir("extra"), key + ".npy"), array);
    meta["extra"][key] = "extra/" + key + ".npy";
  }
  if (!d.relation_names.empty()) {
    write_lines(path_join(out.path(), "relations.txt"), d.relation_names);
    meta["relation_names"] = "relations.txt";
  }
  write_text_file(path_join(out.path(), "meta.json"), meta.dump(2) + "\n");
  out.commit();
}

}  // namespace tessera
