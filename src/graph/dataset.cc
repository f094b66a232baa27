#include "tessera/graph/dataset.h"

#include <algorithm>

#include "tessera/base/error.h"

namespace tessera {
namespace {

void check_ids(const Array& ids, int64_t bound, const std::string& what) {
  if (ids.dtype() != DType::kInt64 || ids.ndim() != 1)
    fail("{}: must be a 1-d int64 array, found {} {}", what, dtype_name(ids.dtype()), ids.shape_string());
  const int64_t* p = ids.data<int64_t>();
  const int64_t n = ids.numel();
  int64_t bad = -1;
#pragma omp parallel for reduction(max : bad)
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= bound) bad = std::max(bad, i);
  }
  if (bad >= 0) fail("{}: entry {} is {}, expected an ID in [0, {})", what, bad, p[bad], bound);
}

}  // namespace

int Dataset::node_type_index(const std::string& type_name) const {
  for (size_t i = 0; i < node_types.size(); ++i)
    if (node_types[i].name == type_name) return static_cast<int>(i);
  return -1;
}

const NodeType& Dataset::node_type(const std::string& type_name) const {
  int i = node_type_index(type_name);
  if (i < 0) fail("dataset '{}' has no node type '{}'", name, type_name);
  return node_types[i];
}

int64_t Dataset::num_nodes() const {
  int64_t n = 0;
  for (const auto& t : node_types) n += t.count;
  return n;
}

int64_t Dataset::num_edges() const {
  int64_t n = 0;
  for (const auto& t : edge_types) n += t.count();
  return n;
}

std::vector<int64_t> Dataset::node_offsets() const {
  std::vector<int64_t> offsets{0};
  for (const auto& t : node_types) offsets.push_back(offsets.back() + t.count);
  return offsets;
}

int64_t Dataset::num_train() const {
  int64_t n = 0;
  for (const auto& t : node_types) n += t.train.empty_handle() ? 0 : t.train.numel();
  return n;
}

void Dataset::validate(const std::string& source) const {
  if (node_types.empty()) fail("{}: no node types", source);
  for (size_t i = 0; i < node_types.size(); ++i) {
    const NodeType& t = node_types[i];
    const std::string where = fmt::format("{}: node type '{}'", source, t.name);
    if (t.name.empty() || t.name.find(':') != std::string::npos)
      fail("{}: node type name '{}' must be non-empty and contain no ':'", source, t.name);
    for (size_t j = 0; j < i; ++j)
      if (node_types[j].name == t.name) fail("{}: node type '{}' listed twice", source, t.name);
    if (t.count < 0) fail("{}: count {} is negative", where, t.count);
    for (const auto& [key, array] : t.data) {
      if (array.rows() != t.count || array.ndim() == 0)
        fail("{} data '{}': expected {} rows, found shape {}", where, key, t.count, array.shape_string());
    }
    auto label = t.data.find("label");
    if (label != t.data.end() && label->second.dtype() != DType::kInt64)
      fail("{} data 'label': expected int64, found {}", where, dtype_name(label->second.dtype()));
    for (auto [split, ids] : {std::pair{"train", &t.train}, {"val", &t.val}, {"test", &t.test}})
      if (!ids->empty_handle()) check_ids(*ids, t.count, where + " " + split + " IDs");
    if (!t.names.empty() && static_cast<int64_t>(t.names.size()) != t.count)
      fail("{}: {} names for {} nodes", where, t.names.size(), t.count);
  }
  for (const EdgeType& e : edge_types) {
    const std::string where = fmt::format("{}: edge type '{}'", source, e.canonical());
    if (e.relation.empty() || e.relation.find(':') != std::string::npos)
      fail("{}: relation name must be non-empty and contain no ':'", where);
    int s = node_type_index(e.src_type);
    int d = node_type_index(e.dst_type);
    if (s < 0) fail("{}: unknown source node type '{}'", where, e.src_type);
    if (d < 0) fail("{}: unknown destination node type '{}'", where, e.dst_type);
    if (e.src.empty_handle() || e.dst.empty_handle()) fail("{}: no edges array", where);
    if (e.src.numel() != e.dst.numel())
      fail("{}: {} sources but {} destinations", where, e.src.numel(), e.dst.numel());
    check_ids(e.src, node_types[s].count, where + " source IDs");
    check_ids(e.dst, node_types[d].count, where + " destination IDs");
    for (const auto& [key, array] : e.data)
      if (array.rows() != e.count() || array.ndim() == 0)
        fail("{} data '{}': expected {} rows, found shape {}", where, key, e.count(), array.shape_string());
  }
}

void add_reverse_edges(Dataset* dataset) {
  const size_t forward = dataset->edge_types.size();
  for (size_t k = 0; k < forward; ++k) {
    const EdgeType& e = dataset->edge_types[k];
    if (e.relation.rfind("rev-", 0) == 0)
      fail("{}: edge type {} is already a reverse; do not add reverse edges twice", dataset->name, e.canonical());
    EdgeType reverse;
    reverse.src_type = e.dst_type;
    reverse.relation = "rev-" + e.relation;
    reverse.dst_type = e.src_type;
    reverse.src = e.dst;  // arrays share their buffers: no copy
    reverse.dst = e.src;
    dataset->edge_types.push_back(std::move(reverse));
  }
}

void rename_node_data(Dataset* dataset, const std::string& renames) {
  size_t pos = 0;
  while (pos <= renames.size()) {
    const size_t comma = std::min(renames.find(',', pos), renames.size());
    const std::string pair = renames.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size() || pair.find('=', eq + 1) != std::string::npos)
      fail("--rename '{}': expected OLD=NEW[,OLD=NEW...], e.g. feat=features,label=labels", pair);
    const std::string from = pair.substr(0, eq), to = pair.substr(eq + 1);
    if (from == "train_mask" || from == "val_mask" || from == "test_mask" || to == "train_mask" ||
        to == "val_mask" || to == "test_mask")
      fail("--rename {}: the split masks keep DGL's names train_mask / val_mask / test_mask", pair);
    bool found = false;
    std::vector<std::string> names;
    for (NodeType& t : dataset->node_types) {
      for (const auto& entry : t.data) names.push_back(t.name + "/" + entry.first);
      const auto it = t.data.find(from);
      if (it == t.data.end()) continue;
      if (t.data.count(to)) fail("--rename {}: node type {} already has data '{}'", pair, t.name, to);
      Array values = it->second;
      t.data.erase(it);
      t.data.emplace(to, std::move(values));
      found = true;
    }
    if (!found)
      fail("--rename {}: no node type of {} has data '{}' (it has: {})", pair, dataset->name, from,
           names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
  }
}

}  // namespace tessera
