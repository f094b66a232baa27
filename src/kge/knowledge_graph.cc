#include "tessera/kge/knowledge_graph.h"

#include <filesystem>
#include <optional>

#include "io/formats.h"
#include "tessera/io/dataset_io.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace fs = std::filesystem;

std::string kg_directory(const KgSource& source) {
  if (source.data_path.empty()) fail("--data_path is required (the folder holding the dataset)");
  if (!source.dataset.empty()) {
    const fs::path nested = fs::path(source.data_path) / source.dataset;
    std::error_code ec;
    if (fs::is_directory(nested, ec)) return nested.string();
  }
  return source.data_path;
}

namespace {

// DGL-KE's --format names onto the dataset readers' formats.
std::string reader_format(const std::string& format) {
  if (format == "auto" || format.empty()) return "auto";
  if (format == "built_in") return "kg";
  if (format == "openke") return "openke";
  fail("unknown --format '{}' (expected built_in, raw_udd_<order>, udd_<order>, openke or auto)", format);
}

// "raw_udd_htr" -> {raw, "htr"}; nullopt for the formats read_dataset knows.
std::optional<KgFiles> user_defined(const std::string& format) {
  for (const bool raw : {true, false}) {
    const std::string prefix = raw ? "raw_udd" : "udd";
    if (format.rfind(prefix, 0) != 0) continue;
    KgFiles spec;
    spec.raw = raw;
    const std::string rest = format.substr(prefix.size());
    if (!rest.empty() && rest[0] != '_') break;  // "udder": not ours
    spec.order = rest.empty() ? "hrt" : rest.substr(1);
    return spec;
  }
  return std::nullopt;
}

// The default files of a user-defined format given without --data_files: DGL-KE's names.
std::vector<std::string> default_files(const std::string& dir, bool raw) {
  std::vector<std::string> files;
  if (!raw) files = {"entities.dict", "relations.dict"};
  files.push_back("train.txt");
  if (file_exists(path_join(dir, "valid.txt")) && file_exists(path_join(dir, "test.txt")))
    files.insert(files.end(), {"valid.txt", "test.txt"});
  return files;
}

}  // namespace

Dataset read_kg_dataset(const KgSource& source) {
  const std::string dir = kg_directory(source);
  std::optional<KgFiles> spec = user_defined(source.format);
  if (!spec && !source.data_files.empty())
    fail("--data_files goes with --format raw_udd_<order> or udd_<order> (DGL-KE's user-defined data), not '{}'",
         source.format);
  if (!spec && source.delimiter != "\t")
    fail("--delimiter goes with --format raw_udd_<order> or udd_<order>, not '{}'", source.format);
  if (spec) {
    spec->delimiter = source.delimiter == "\\t" ? "\t" : source.delimiter;  // as typed in a shell: '\t'
    spec->files = source.data_files.empty() ? default_files(dir, spec->raw) : source.data_files;
    Dataset d = read_kg_files(dir, *spec);
    d.name = !source.dataset.empty() ? source.dataset : std::filesystem::path(dir).lexically_normal().filename().string();
    if (d.name.empty()) d.name = "kg";
    return d;
  }
  ReadOptions options;
  options.format = reader_format(source.format);
  options.name = source.dataset;
  return read_dataset(dir, options);
}

KnowledgeGraph read_knowledge_graph(const KgSource& source) { return knowledge_graph_of(read_kg_dataset(source)); }

KnowledgeGraph knowledge_graph_of(const Dataset& d) {
  if (d.node_types.size() != 1 || d.node_types[0].name != kEntityType || d.edge_types.size() != 1 ||
      d.edge_types[0].data.count(kRelationField) == 0)
    fail("dataset '{}' is not a knowledge graph (expected one node type '{}' and one edge type with a '{}' array)",
         d.name, kEntityType, kRelationField);
  KnowledgeGraph kg;
  kg.name = d.name;
  kg.num_entities = d.node_types[0].count;
  kg.num_relations = static_cast<int64_t>(d.relation_names.size());
  kg.entity_names = d.node_types[0].names;
  kg.relation_names = d.relation_names;
  const EdgeType& e = d.edge_types[0];
  const int64_t n = e.count();
  kg.train = Array::zeros(DType::kInt64, {n, 3});
  int64_t* out = kg.train.data<int64_t>();
  const int64_t* h = e.src.data<int64_t>();
  const int64_t* t = e.dst.data<int64_t>();
  const int64_t* r = e.data.at(kRelationField).data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    out[3 * i] = h[i];
    out[3 * i + 1] = r[i];
    out[3 * i + 2] = t[i];
    kg.num_relations = std::max(kg.num_relations, r[i] + 1);  // names may be absent
  }
  for (auto [key, dst] : {std::pair{"valid_triples", &kg.valid}, {"test_triples", &kg.test}}) {
    auto it = d.extra.find(key);
    *dst = it != d.extra.end() ? it->second : Array::zeros(DType::kInt64, {0, 3});
    if (dst->ndim() != 2 || dst->dim(1) != 3 || dst->dtype() != DType::kInt64)
      fail("dataset '{}': {} must be int64 [n, 3], found {}", d.name, key, dst->shape_string());
    for (int64_t i = 0; i < dst->rows(); ++i) kg.num_relations = std::max(kg.num_relations, triple(*dst, i)[1] + 1);
  }
  return kg;
}

}  // namespace tessera::kge
