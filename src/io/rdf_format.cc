// RDF entity-classification datasets as DGL distributes them (AIFB, MUTAG,
// BGS, AM): an N-Triples graph plus trainingSet.tsv / testSet.tsv.
//
// Entities are the IRIs and blank nodes, and each distinct literal (node type
// "_Literal"), as in the R-GCN paper's counts (AIFB: 8,285 entities). An
// entity's node type is the local name of its rdf:type class; with several,
// the most populous one (the most general: Person rather than FullProfessor,
// so labelled entities share one type), "untyped" with none. Every predicate, rdf:type
// included, becomes one relation, and each (source type, predicate, target
// type) combination a canonical edge type.
#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "formats.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera {
namespace {

constexpr std::string_view kRdfType = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

// One term of an N-Triples line starting at *pos: an IRI (<...>, returned
// without brackets), a blank node (_:x) or a literal ("..." with optional
// @lang or ^^<type>). Returns false for a literal.
bool parse_term(std::string_view line, size_t* pos, std::string_view* term, const std::string& where) {
  while (*pos < line.size() && (line[*pos] == ' ' || line[*pos] == '\t')) ++*pos;
  if (*pos >= line.size()) fail("{}: line ends early (expected subject, predicate, object and '.')", where);
  const char c = line[*pos];
  if (c == '<') {
    size_t end = line.find('>', *pos);
    if (end == std::string_view::npos) fail("{}: unterminated IRI (missing '>')", where);
    *term = line.substr(*pos + 1, end - *pos - 1);
    *pos = end + 1;
    return true;
  }
  if (c == '_' && *pos + 1 < line.size() && line[*pos + 1] == ':') {
    size_t end = line.find_first_of(" \t", *pos);
    if (end == std::string_view::npos) end = line.size();
    *term = line.substr(*pos, end - *pos);
    *pos = end;
    return true;
  }
  if (c == '"') {
    size_t i = *pos + 1;
    while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
    if (i >= line.size()) fail("{}: unterminated literal (missing closing '\"')", where);
    ++i;
    if (i < line.size() && line[i] == '@') {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    } else if (i + 1 < line.size() && line[i] == '^' && line[i + 1] == '^') {
      size_t end = line.find('>', i);
      if (end == std::string_view::npos) fail("{}: unterminated literal datatype IRI", where);
      i = end + 1;
    }
    *term = line.substr(*pos, i - *pos);
    *pos = i;
    return false;
  }
  fail("{}: expected '<IRI>', '_:blank' or '\"literal\"', found '{}'", where, std::string(line.substr(*pos, 20)));
}

// Last segment of an IRI, made safe for a type name ("...ontology#Person" -> "Person").
std::string local_name(std::string_view iri) {
  size_t cut = iri.find_last_of("#/");
  std::string name(cut == std::string_view::npos ? iri : iri.substr(cut + 1));
  if (name.empty()) name = std::string(iri);
  std::replace(name.begin(), name.end(), ':', '_');
  return name;
}

// Distinct safe names for distinct IRIs: the local name, suffixed when two
// IRIs share one.
class NameShortener {
 public:
  const std::string& shorten(const std::string& iri) {
    auto it = by_iri_.find(iri);
    if (it != by_iri_.end()) return it->second;
    std::string name = local_name(iri);
    for (int k = 2; used_.count(name); ++k) name = local_name(iri) + "_" + std::to_string(k);
    used_.insert({name, 0});
    return by_iri_.emplace(iri, name).first->second;
  }

 private:
  std::unordered_map<std::string, std::string> by_iri_;
  std::map<std::string, int> used_;
};

std::string find_graph_file(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string n = entry.path().filename().string();
    if (ends_with(n, ".nt") || ends_with(n, ".nt.gz")) found.push_back(entry.path().string());
  }
  if (found.empty()) fail("{}: no *.nt or *.nt.gz file", dir);
  if (found.size() > 1) fail("{}: several N-Triples files; expected one", dir);
  return found[0];
}

}  // namespace

Dataset read_rdf(const std::string& dir) {
  const std::string graph_file = find_graph_file(dir);
  std::unordered_map<std::string, int64_t> entity_id;
  std::vector<std::string> entity_iri;
  auto entity = [&](std::string_view iri) {
    auto [it, inserted] = entity_id.emplace(std::string(iri), static_cast<int64_t>(entity_iri.size()));
    if (inserted) entity_iri.emplace_back(iri);
    return it->second;
  };
  struct Triple { int64_t s; int32_t p; int64_t o; };
  std::vector<Triple> triples;
  std::unordered_map<std::string, int32_t> predicate_id;
  std::vector<std::string> predicate_iri;
  std::unordered_map<int64_t, std::vector<std::string>> classes_of;  // entity -> class IRIs
  std::unordered_map<std::string, int64_t> class_size;
  std::vector<uint8_t> literal;                       // by entity id

  LineReader reader(graph_file);
  std::string_view line;
  while (reader.next(&line)) {
    std::string_view t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t pos = 0;
    std::string_view s, p, o;
    const std::string where = reader.where();
    if (!parse_term(t, &pos, &s, where)) fail("{}: the subject cannot be a literal", where);
    if (!parse_term(t, &pos, &p, where) || p.substr(0, 2) == "_:") fail("{}: the predicate must be an IRI", where);
    const bool object_is_literal = !parse_term(t, &pos, &o, where);
    while (pos < t.size() && (t[pos] == ' ' || t[pos] == '\t')) ++pos;
    if (pos >= t.size() || t[pos] != '.') fail("{}: expected '.' after the object", where);
    const int64_t sid = entity(s);
    const int64_t oid = entity(o);
    if (object_is_literal) {
      literal.resize(entity_iri.size(), 0);
      literal[oid] = 1;
    }
    auto [pit, new_predicate] = predicate_id.emplace(std::string(p), static_cast<int32_t>(predicate_iri.size()));
    if (new_predicate) predicate_iri.emplace_back(p);
    triples.push_back({sid, pit->second, oid});
    if (p == kRdfType) {
      classes_of[sid].emplace_back(o);
      ++class_size[std::string(o)];
    }
  }

  std::unordered_map<int64_t, std::string> type_of;
  for (const auto& [e, classes] : classes_of) {
    const std::string* best = &classes[0];
    for (const auto& c : classes)
      if (class_size[c] > class_size[*best] || (class_size[c] == class_size[*best] && c < *best)) best = &c;
    type_of[e] = *best;
  }

  // Node types, in order of first appearance of their class.
  NameShortener type_names;
  Dataset d;
  std::map<std::string, int> type_index;
  std::vector<int> node_type(entity_iri.size());
  std::vector<int64_t> local_id(entity_iri.size());
  for (size_t e = 0; e < entity_iri.size(); ++e) {
    auto it = type_of.find(static_cast<int64_t>(e));
    const bool is_literal = e < literal.size() && literal[e];
    const std::string name = is_literal ? "_Literal" : it == type_of.end() ? "untyped" : type_names.shorten(it->second);
    auto [tit, fresh] = type_index.emplace(name, static_cast<int>(d.node_types.size()));
    if (fresh) d.node_types.push_back(NodeType{name, 0, {}, {}, {}, {}, {}});
    NodeType& nt = d.node_types[tit->second];
    node_type[e] = tit->second;
    local_id[e] = nt.count++;
    nt.names.push_back(entity_iri[e]);
  }

  NameShortener relation_names;
  std::map<std::tuple<int, int32_t, int>, size_t> etype_index;
  std::vector<std::vector<int64_t>> src, dst;
  for (const Triple& tr : triples) {
    auto key = std::make_tuple(node_type[tr.s], tr.p, node_type[tr.o]);
    auto [it, fresh] = etype_index.emplace(key, d.edge_types.size());
    if (fresh) {
      d.edge_types.push_back(EdgeType{d.node_types[node_type[tr.s]].name, relation_names.shorten(predicate_iri[tr.p]),
                                      d.node_types[node_type[tr.o]].name, {}, {}, {}});
      src.emplace_back();
      dst.emplace_back();
    }
    src[it->second].push_back(local_id[tr.s]);
    dst[it->second].push_back(local_id[tr.o]);
  }
  for (size_t i = 0; i < d.edge_types.size(); ++i) {
    d.edge_types[i].src = Array::from_vector(src[i]);
    d.edge_types[i].dst = Array::from_vector(dst[i]);
  }

  // Labels from trainingSet.tsv / testSet.tsv: entity IRI in the first
  // column, class IRI in the last; classes numbered in sorted order.
  struct Labelled { int64_t entity; std::string label; bool train; };
  std::vector<Labelled> labelled;
  for (auto [file, is_train] : {std::pair{"trainingSet.tsv", true}, {"testSet.tsv", false}}) {
    const std::string path = path_join(dir, file);
    if (!file_exists(path)) continue;
    LineReader tsv(path);
    std::vector<std::string_view> fields;
    bool header = true;
    while (tsv.next(&line)) {
      if (trim(line).empty()) continue;
      split_fields(line, "\t", false, &fields);
      if (fields.size() < 2) fail("{}: expected 'entity<TAB>...<TAB>label', found '{}'", tsv.where(), std::string(line));
      if (header) { header = false; continue; }
      auto it = entity_id.find(std::string(trim(fields.front())));
      if (it == entity_id.end())
        fail("{}: entity '{}' does not occur in {}", tsv.where(), std::string(fields.front()), graph_file);
      labelled.push_back({it->second, std::string(trim(fields.back())), is_train});
    }
  }
  if (!labelled.empty()) {
    std::vector<std::string> classes;
    for (const auto& l : labelled) classes.push_back(l.label);
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    std::vector<std::vector<int64_t>> labels(d.node_types.size()), train(d.node_types.size()), test(d.node_types.size());
    for (size_t t = 0; t < d.node_types.size(); ++t) labels[t].assign(d.node_types[t].count, -1);
    for (const auto& l : labelled) {
      const int t = node_type[l.entity];
      labels[t][local_id[l.entity]] = std::lower_bound(classes.begin(), classes.end(), l.label) - classes.begin();
      (l.train ? train : test)[t].push_back(local_id[l.entity]);
    }
    for (size_t t = 0; t < d.node_types.size(); ++t) {
      if (train[t].empty() && test[t].empty()) continue;
      d.node_types[t].data["label"] = Array::from_vector(labels[t]);
      d.node_types[t].train = Array::from_vector(train[t]);
      d.node_types[t].test = Array::from_vector(test[t]);
    }
  }
  return d;
}

}  // namespace tessera
