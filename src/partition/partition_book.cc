#include "tessera/partition/partition_book.h"

#include <algorithm>

#include "tessera/base/error.h"

namespace tessera {
namespace {

IdSpace make_space(std::string policy, bool is_node, int type, const std::vector<IdRange>& ranges) {
  IdSpace s;
  s.policy = std::move(policy);
  s.is_node = is_node;
  s.type = type;
  s.starts.push_back(0);
  for (const IdRange& r : ranges) {
    s.starts.push_back(s.starts.back() + (r.second - r.first));
    s.homogeneous_first.push_back(r.first);
  }
  return s;
}

}  // namespace

int IdSpace::owner(int64_t id) const {
  if (id < 0 || id >= size()) return -1;
  auto it = std::upper_bound(starts.begin() + 1, starts.end(), id);
  return static_cast<int>(it - starts.begin()) - 1;
}

PartitionBook::PartitionBook(const PartitionConfig& config)
    : num_parts_(config.num_parts), num_ntypes_(static_cast<int>(config.ntypes.size())) {
  for (int t = 0; t < num_ntypes_; ++t)
    spaces_.push_back(make_space("node:" + config.ntypes[t], true, t, config.node_map[t]));
  for (size_t k = 0; k < config.etypes.size(); ++k)
    spaces_.push_back(make_space("edge:" + config.etypes[k], false, static_cast<int>(k), config.edge_map[k]));
  for (int p = 0; p < num_parts_; ++p)
    for (int t = 0; t < num_ntypes_; ++t) node_range_first_.push_back(config.node_map[t][p].first);
  node_range_first_.push_back(config.num_nodes);
  num_etypes_ = static_cast<int>(config.etypes.size());
  for (int p = 0; p < num_parts_; ++p)
    for (int k = 0; k < num_etypes_; ++k) edge_range_first_.push_back(config.edge_map[k][p].first);
  edge_range_first_.push_back(config.num_edges);
}

PartitionBook::TypedNode PartitionBook::typed_node(int64_t homogeneous) const {
  if (homogeneous < 0 || homogeneous >= node_range_first_.back()) return {};
  // Empty ranges share their start with the next one; upper_bound lands
  // past all of them, on the range that holds the ID.
  const auto it = std::upper_bound(node_range_first_.begin(), node_range_first_.end() - 1, homogeneous);
  const int range = static_cast<int>(it - node_range_first_.begin()) - 1;
  const int part = range / num_ntypes_, ntype = range % num_ntypes_;
  const IdSpace& s = spaces_[ntype];
  return {ntype, s.starts[part] + homogeneous - s.homogeneous_first[part]};
}

PartitionBook::TypedEdge PartitionBook::typed_edge(int64_t homogeneous) const {
  if (num_etypes_ == 0 || homogeneous < 0 || homogeneous >= edge_range_first_.back()) return {};
  // As typed_node: empty ranges share their start with the next one.
  const auto it = std::upper_bound(edge_range_first_.begin(), edge_range_first_.end() - 1, homogeneous);
  const int range = static_cast<int>(it - edge_range_first_.begin()) - 1;
  const int part = range / num_etypes_, etype = range % num_etypes_;
  const IdSpace& s = edge_space(etype);
  return {etype, s.starts[part] + homogeneous - s.homogeneous_first[part]};
}

int64_t PartitionBook::homogeneous_edge(int etype, int64_t type_local) const {
  const IdSpace& s = edge_space(etype);
  const int part = s.owner(type_local);
  if (part < 0) fail("edge {} of type {} is out of range ({} has {} edges)", type_local, s.policy, s.policy, s.size());
  return s.homogeneous_first[part] + type_local - s.starts[part];
}

int64_t PartitionBook::homogeneous_node(int ntype, int64_t type_local) const {
  const IdSpace& s = spaces_.at(ntype);
  const int part = s.owner(type_local);
  if (part < 0) fail("node {} of type {} is out of range ({} has {} nodes)", type_local, s.policy, s.policy, s.size());
  return s.homogeneous_first[part] + type_local - s.starts[part];
}

std::string PartitionBook::node_policy(int ntype) const { return spaces_.at(ntype).policy; }

std::string PartitionBook::edge_policy(int etype) const { return spaces_.at(num_ntypes_ + etype).policy; }

const IdSpace& PartitionBook::space(const std::string& policy) const {
  for (const IdSpace& s : spaces_)
    if (s.policy == policy) return s;
  std::string known;
  for (const IdSpace& s : spaces_) known += (known.empty() ? "" : ", ") + s.policy;
  fail("unknown partition policy '{}' (this graph has: {})", policy, known);
}

SplitIds PartitionBook::split(const IdSpace& space, const int64_t* ids, int64_t count, const std::string& what) const {
  SplitIds out;
  out.local_rows.resize(num_parts_);
  out.positions.resize(num_parts_);
  if (num_parts_ == 1) {
    // The common standalone case: no search needed.
    auto& rows = out.local_rows[0];
    rows.assign(ids, ids + count);
    for (int64_t i = 0; i < count; ++i)
      if (ids[i] < 0 || ids[i] >= space.size())
        fail("{}: ID {} is out of range ({} has {} IDs)", what, ids[i], space.policy, space.size());
    out.positions[0].resize(count);
    for (int64_t i = 0; i < count; ++i) out.positions[0][i] = i;
    return out;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int p = space.owner(ids[i]);
    if (p < 0) fail("{}: ID {} is out of range ({} has {} IDs)", what, ids[i], space.policy, space.size());
    out.local_rows[p].push_back(ids[i] - space.starts[p]);
    out.positions[p].push_back(i);
  }
  return out;
}

}  // namespace tessera
