// Knowledge-graph triples in the forms DGL-KE and OpenKE users have. All map
// onto the KG convention of dataset.h: training triples are the edges of
// "entity:triple:entity" with their relation id in edge array "relation";
// validation and test triples go to extra["valid_triples"/"test_triples"] as
// int64 [n, 3] rows of (head, relation, tail).
#include <unordered_map>

#include <fmt/format.h>

#include "formats.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace tessera {
namespace {

struct Triples {
  std::vector<int64_t> head, relation, tail;
  size_t size() const { return head.size(); }
};

class NameIndex {
 public:
  int64_t id_of(std::string_view name) {
    auto it = ids_.find(std::string(name));
    if (it != ids_.end()) return it->second;
    int64_t id = static_cast<int64_t>(names_.size());
    names_.emplace_back(name);
    ids_.emplace(names_.back(), id);
    return id;
  }
  // Adds a name with a given id; ids must come as a permutation of 0..n-1
  // for the file's n names, so an id of `count` or more is an error (a huge
  // id in a bad file must not become an allocation).
  void insert(std::string_view name, int64_t id, int64_t count, const std::string& where) {
    if (id < 0) fail("{}: negative id {}", where, id);
    if (id >= count) fail("{}: id {} is not below the file's {} names (ids are 0..n-1)", where, id, count);
    if (!ids_.emplace(std::string(name), id).second) fail("{}: duplicate name '{}'", where, std::string(name));
    if (id >= static_cast<int64_t>(names_.size())) names_.resize(id + 1);
    if (!names_[id].empty()) fail("{}: duplicate id {}", where, id);
    names_[id] = std::string(name);
  }
  std::vector<std::string>& names() { return names_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> names_;
};

Dataset assemble(Triples train, const Triples& valid, const Triples& test, std::vector<std::string> entities,
                 std::vector<std::string> relations, const std::string& dir) {
  Dataset d;
  NodeType t;
  t.name = kEntityType;
  t.count = static_cast<int64_t>(entities.size());
  t.names = std::move(entities);
  d.node_types.push_back(std::move(t));
  EdgeType e{kEntityType, kTripleRelation, kEntityType, {}, {}, {}};
  e.src = Array::from_vector(train.head);
  e.dst = Array::from_vector(train.tail);
  e.data[kRelationField] = Array::from_vector(train.relation);
  d.edge_types.push_back(std::move(e));
  for (auto [key, triples] : {std::pair{"valid_triples", &valid}, {"test_triples", &test}}) {
    Array a = Array::zeros(DType::kInt64, {static_cast<int64_t>(triples->size()), 3});
    int64_t* p = a.data<int64_t>();
    for (size_t i = 0; i < triples->size(); ++i) {
      p[3 * i] = triples->head[i];
      p[3 * i + 1] = triples->relation[i];
      p[3 * i + 2] = triples->tail[i];
    }
    d.extra[key] = a;
  }
  d.relation_names = std::move(relations);
  const int64_t num_relations = static_cast<int64_t>(d.relation_names.size());
  for (const Triples* tr : std::initializer_list<const Triples*>{&train, &valid, &test})
    for (int64_t r : tr->relation)
      if (r < 0 || r >= num_relations) fail("{}: relation id {} is not below the relation count {}", dir, r, num_relations);
  return d;
}

// Which field of a triple line holds the head, the relation and the tail, and
// how fields are separated.
struct Columns {
  std::string separators;
  bool skip_empty;  // runs of separators count as one (whitespace)
  int head, relation, tail;
  // "head<TAB>relation<TAB>tail", in this layout's order and separator.
  std::string pattern() const {
    const std::string sep = separators == "\t" ? "<TAB>" : skip_empty ? " " : separators;
    std::string names[3];
    names[head] = "head", names[relation] = "relation", names[tail] = "tail";
    return names[0] + sep + names[1] + sep + names[2];
  }
};

const Columns kTabHrt{"\t", false, 0, 1, 2};

// The fields of a triple line: exactly three, as `columns` says.
void split_triple(std::string_view line, const Columns& columns, const LineReader& reader, const char* kind,
                  std::vector<std::string_view>* fields) {
  split_fields(trim(line), columns.separators, columns.skip_empty, fields);
  if (fields->size() != 3)
    fail("{}: expected {}'{}', found {} field(s) in '{}'", reader.where(), kind, columns.pattern(), fields->size(),
         std::string(line));
}

void read_name_triples(const std::string& path, const Columns& columns, NameIndex* entities, NameIndex* relations,
                       Triples* out) {
  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(&line)) {
    if (trim(line).empty()) continue;
    split_triple(line, columns, reader, "", &fields);
    out->head.push_back(entities->id_of(fields[columns.head]));
    out->relation.push_back(relations->id_of(fields[columns.relation]));
    out->tail.push_back(entities->id_of(fields[columns.tail]));
  }
}

// A file's non-blank lines, less its first one when that is a count line
// (OpenKE's files open with the number of lines that follow); check() holds
// the lines read to that count.
class CountedLines {
 public:
  CountedLines(const std::string& path, bool has_count_line, const char* what)
      : reader_(path), has_count_line_(has_count_line), what_(what), count_field_(fmt::format("({} count)", what)) {}
  bool next(std::string_view* line) {
    while (reader_.next(line)) {
      if (trim(*line).empty()) continue;
      if (!has_count_line_ || declared_ >= 0) return true;
      declared_ = parse_int(trim(*line), reader_.where(), count_field_.c_str());
    }
    return false;
  }
  void check(size_t read) const {
    if (has_count_line_ && declared_ >= 0 && declared_ != static_cast<int64_t>(read))
      fail("{}: first line declares {} {}, file has {}", reader_.path(), declared_, what_, read);
  }
  const LineReader& reader() const { return reader_; }

 private:
  LineReader reader_;
  bool has_count_line_;
  const char* what_;
  std::string count_field_;  // "(triples count)": what parse_int names on a bad count line
  int64_t declared_ = -1;
};

// ID triples in `columns`' order, with an optional count line (OpenKE).
void read_id_triples(const std::string& path, bool has_count_line, const Columns& columns, int64_t num_entities,
                     int64_t num_relations, Triples* out) {
  CountedLines lines(path, has_count_line, "triples");
  const LineReader& reader = lines.reader();
  std::string_view line;
  std::vector<std::string_view> fields;
  while (lines.next(&line)) {
    split_triple(line, columns, reader, "ids ", &fields);
    int64_t h = parse_int(fields[columns.head], reader.where(), "(head id)");
    int64_t r = parse_int(fields[columns.relation], reader.where(), "(relation id)");
    int64_t t = parse_int(fields[columns.tail], reader.where(), "(tail id)");
    for (int64_t e : {h, t})
      if (e < 0 || e >= num_entities)
        fail("{}: entity id {} is not below the entity count {}", reader.where(), e, num_entities);
    if (r < 0 || r >= num_relations)
      fail("{}: relation id {} is not below the relation count {}", reader.where(), r, num_relations);
    out->head.push_back(h);
    out->relation.push_back(r);
    out->tail.push_back(t);
  }
  lines.check(out->size());
}

}  // namespace

// "name<TAB>id" (OpenKE, with a count line) or "id<TAB>name" (DGL-KE .dict;
// user-defined maps with their --delimiter).
std::vector<std::string> read_name_map(const std::string& path, bool has_count_line, bool id_first,
                                       const std::string& separator) {
  // Two passes over the lines read: the ids are checked against the number of names.
  struct Entry {
    std::string name;
    int64_t id, line;
  };
  std::vector<Entry> entries;
  CountedLines lines(path, has_count_line, "names");
  const LineReader& reader = lines.reader();
  std::string_view line;
  std::vector<std::string_view> fields;
  while (lines.next(&line)) {
    split_fields(trim(line), separator, false, &fields);
    if (fields.size() != 2)
      fail("{}: expected '{}', found '{}'", reader.where(), id_first ? "id<SEP>name" : "name<SEP>id", std::string(line));
    const int64_t id = parse_int(fields[id_first ? 0 : 1], reader.where(), "(id)");
    entries.push_back({std::string(fields[id_first ? 1 : 0]), id, reader.line_number()});
  }
  const auto n = static_cast<int64_t>(entries.size());
  NameIndex index;
  for (const Entry& e : entries) index.insert(e.name, e.id, n, fmt::format("{}:{}", path, e.line));
  lines.check(entries.size());
  for (size_t i = 0; i < index.names().size(); ++i)
    if (index.names()[i].empty()) fail("{}: ids are not contiguous: id {} is missing", path, i);
  return index.names();
}

Dataset read_kg_names(const std::string& dir) {
  NameIndex entities, relations;
  Triples train, valid, test;
  read_name_triples(path_join(dir, "train.txt"), kTabHrt, &entities, &relations, &train);
  for (auto [file, triples] : {std::pair{"valid.txt", &valid}, {"test.txt", &test}}) {
    const std::string p = path_join(dir, file);
    if (file_exists(p)) read_name_triples(p, kTabHrt, &entities, &relations, triples);
  }
  return assemble(std::move(train), valid, test, std::move(entities.names()), std::move(relations.names()), dir);
}

namespace {

// Where and how an id-based KG layout stores its maps and triples.
struct IdLayout {
  const char* entity_file;
  const char* relation_file;
  const char* triple_files[3];  // train, valid, test
  bool count_lines;             // OpenKE files start with a count
  bool id_first;                // "id<TAB>name" (DGL-KE) vs "name<TAB>id" (OpenKE)
  bool openke_order;            // triples "h t r" (OpenKE) vs "h r t" (DGL-KE)
};

Dataset read_kg_ids(const std::string& dir, const IdLayout& l) {
  auto entities = read_name_map(path_join(dir, l.entity_file), l.count_lines, l.id_first, "\t");
  auto relations = read_name_map(path_join(dir, l.relation_file), l.count_lines, l.id_first, "\t");
  const auto ne = static_cast<int64_t>(entities.size());
  const auto nr = static_cast<int64_t>(relations.size());
  Triples split[3];
  for (int i = 0; i < 3; ++i) {
    const std::string p = path_join(dir, l.triple_files[i]);
    const Columns columns{" \t", true, 0, l.openke_order ? 2 : 1, l.openke_order ? 1 : 2};
    if (i == 0 || file_exists(p)) read_id_triples(p, l.count_lines, columns, ne, nr, &split[i]);
  }
  return assemble(std::move(split[0]), split[1], split[2], std::move(entities), std::move(relations), dir);
}

}  // namespace

Dataset read_kg_openke(const std::string& dir) {
  return read_kg_ids(dir, {"entity2id.txt", "relation2id.txt", {"train2id.txt", "valid2id.txt", "test2id.txt"}, true,
                           false, true});
}

Dataset read_kg_udd(const std::string& dir) {
  return read_kg_ids(dir, {"entities.dict", "relations.dict", {"train.txt", "valid.txt", "test.txt"}, false, true, false});
}

}  // namespace tessera

namespace tessera {

Dataset read_kg_files(const std::string& dir, const KgFiles& spec) {
  if (spec.order.size() != 3 || spec.order.find('h') == std::string::npos ||
      spec.order.find('r') == std::string::npos || spec.order.find('t') == std::string::npos)
    fail("--format {}udd_{}: the suffix must order the letters h, r and t (e.g. hrt, htr)", spec.raw ? "raw_" : "",
         spec.order);
  if (spec.delimiter.size() != 1)
    fail("--delimiter '{}': expected one character (DGL-KE's are \\t, |, , and ;)", spec.delimiter);
  const Columns columns{spec.delimiter, false, static_cast<int>(spec.order.find('h')),
                        static_cast<int>(spec.order.find('r')), static_cast<int>(spec.order.find('t'))};
  const size_t n = spec.files.size();
  const size_t maps = spec.raw ? 0 : 2;  // udd names its entity and relation maps first
  if (n != maps + 1 && n != maps + 3)
    fail(fmt::runtime(spec.raw ? "--format raw_udd_{0} takes 1 or 3 --data_files (train, or train valid test), got {1}"
                               : "--format udd_{0} takes 3 or 5 --data_files (entities relations train, or entities "
                                 "relations train valid test), got {1}"),
         spec.order, n);
  std::vector<std::string> paths;
  for (const std::string& f : spec.files) {
    paths.push_back(path_join(dir, f));
    if (!file_exists(paths.back())) fail("--data_files: {} is not in {}", f, dir);
  }
  Triples split[3];
  if (spec.raw) {
    NameIndex entities, relations;
    for (size_t i = 0; i < n; ++i) read_name_triples(paths[i], columns, &entities, &relations, &split[i]);
    return assemble(std::move(split[0]), split[1], split[2], std::move(entities.names()), std::move(relations.names()),
                    dir);
  }
  auto entities = read_name_map(paths[0], false, true, spec.delimiter);
  auto relations = read_name_map(paths[1], false, true, spec.delimiter);
  for (size_t i = maps; i < n; ++i)
    read_id_triples(paths[i], false, columns, static_cast<int64_t>(entities.size()),
                    static_cast<int64_t>(relations.size()), &split[i - maps]);
  return assemble(std::move(split[0]), split[1], split[2], std::move(entities), std::move(relations), dir);
}

}  // namespace tessera
