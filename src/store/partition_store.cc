#include "tessera/store/partition_store.h"

#include <algorithm>

#include "base/resident.h"
#include "tessera/io/npy.h"
#include "tessera/base/error.h"

namespace tessera::store {
namespace {

LocalTensor view_tensor(Array rows, const std::string& name, const IdSpace& space, int part) {
  LocalTensor t;
  t.rows = std::move(rows);
  t.spec.name = name;
  t.spec.dtype = t.rows.dtype();
  t.spec.row_shape.assign(t.rows.shape().begin() + 1, t.rows.shape().end());
  t.spec.policy = space.policy;
  t.spec.persistent = true;
  t.first_id = space.starts[part];
  return t;
}

LocalTensor file_tensor(const std::string& path, const std::string& name, const std::string& policy,
                        int64_t first_id, int64_t expected_rows) {
  LocalTensor t;
  t.rows = read_npy(path);
  if (t.rows.ndim() == 0 || t.rows.rows() != expected_rows)
    fail("{}: expected {} rows (the partition's share of {}), found shape {}", path, expected_rows, policy,
         t.rows.shape_string());
  make_resident(t.rows.raw(), t.rows.nbytes());  // feature rows are fetched at random
  t.spec.name = name;
  t.spec.dtype = t.rows.dtype();
  t.spec.row_shape.assign(t.rows.shape().begin() + 1, t.rows.shape().end());
  t.spec.policy = policy;
  t.spec.persistent = true;
  t.first_id = first_id;
  t.writable = false;
  return t;
}

}  // namespace

std::string node_tensor_name(const std::string& ntype, const std::string& feature) {
  return "node/" + ntype + "/" + feature;
}
std::string edge_tensor_name(const std::string& etype, const std::string& feature) {
  return "edge/" + etype + "/" + feature;
}

PartitionStore::PartitionStore(const PartitionConfig& config, const PartitionBook& book, int part) : part_(part) {
  if (part < 0 || part >= config.num_parts)
    fail("{}: partition {} does not exist (the graph has {})", config.dir, part, config.num_parts);
  const PartitionFiles& files = config.parts[part];
  const std::string graph = config.path(files.part_graph);
  const IdRange nodes = config.part_nodes(part);
  const IdRange edges = config.part_edges(part);
  first_node_ = nodes.first;
  first_edge_ = edges.first;
  indptr_ = read_npy_checked(graph + "/indptr.npy", DType::kInt64, 1, "partition graph indptr");
  indices_ = read_npy_checked(graph + "/indices.npy", DType::kInt64, 1, "partition graph indices");
  eids_ = read_npy_checked(graph + "/eids.npy", DType::kInt64, 1, "partition graph eids");
  if (config.etypes.size() > 1)
    etypes_ = read_npy_checked(graph + "/etypes.npy", DType::kInt32, 1, "partition graph etypes");
  if (indptr_.rows() != nodes.second - nodes.first + 1)
    fail("{}/indptr.npy: expected {} entries for the {} owned nodes, found {}", graph,
         nodes.second - nodes.first + 1, nodes.second - nodes.first, indptr_.rows());
  const int64_t num_edges = indptr_.data<int64_t>()[indptr_.rows() - 1];
  if (num_edges != edges.second - edges.first || indices_.rows() != num_edges || eids_.rows() != num_edges)
    fail("{}: the CSC arrays hold {} edges, the config gives partition {} {} edges", graph, num_edges, part,
         edges.second - edges.first);
  // Sampling reads the CSC at random from the first batch on.
  for (const Array* a : {&indptr_, &indices_, &etypes_}) make_resident(a->raw(), a->nbytes());
  {
    const int64_t* e = eids_.data<int64_t>();
    eids_are_positions_ = true;
    for (int64_t pos = 0; pos < num_edges && eids_are_positions_; ++pos) eids_are_positions_ = e[pos] == first_edge_ + pos;
  }

  // Original IDs, per type, as read-only tensors: "node/<ntype>/_ORIG_ID".
  const Array orig_nids = read_npy_checked(config.path(files.orig_nids), DType::kInt64, 1, "orig_nids");
  const Array orig_eids = read_npy_checked(config.path(files.orig_eids), DType::kInt64, 1, "orig_eids");
  if (orig_nids.rows() != num_nodes() || orig_eids.rows() != num_edges)
    fail("{}: orig_nids/orig_eids do not match the partition's {} nodes and {} edges", config.path(files.orig_nids),
         num_nodes(), num_edges);
  for (size_t t = 0; t < config.ntypes.size(); ++t) {
    const IdSpace& space = book.node_space(static_cast<int>(t));
    const int64_t begin = space.homogeneous_first[part] - first_node_;
    add(view_tensor(orig_nids.slice_rows(begin, begin + space.starts[part + 1] - space.starts[part]),
                    node_tensor_name(config.ntypes[t], kOrigIdName), space, part));
  }
  for (size_t k = 0; k < config.etypes.size(); ++k) {
    const IdSpace& space = book.edge_space(static_cast<int>(k));
    const int64_t begin = space.homogeneous_first[part] - first_edge_;
    add(view_tensor(orig_eids.slice_rows(begin, begin + space.starts[part + 1] - space.starts[part]),
                    edge_tensor_name(config.etypes[k], kOrigIdName), space, part));
  }

  for (size_t t = 0; t < config.ntypes.size(); ++t) {
    const std::string& ntype = config.ntypes[t];
    auto schema = config.node_feat_schema.find(ntype);
    if (schema == config.node_feat_schema.end()) continue;
    const IdSpace& space = book.node_space(static_cast<int>(t));
    for (const auto& [feature, s] : schema->second) {
      const std::string name = node_tensor_name(ntype, feature);
      add(file_tensor(config.path(files.node_feats + "/" + ntype + "/" + feature + ".npy"), name, space.policy,
                      space.starts[part], space.starts[part + 1] - space.starts[part]));
    }
  }
  for (size_t k = 0; k < config.etypes.size(); ++k) {
    const std::string& etype = config.etypes[k];
    auto schema = config.edge_feat_schema.find(etype);
    if (schema == config.edge_feat_schema.end()) continue;
    const IdSpace& space = book.edge_space(static_cast<int>(k));
    for (const auto& [feature, s] : schema->second)
      add(file_tensor(config.path(files.edge_feats + "/" + etype + "/" + feature + ".npy"),
                      edge_tensor_name(etype, feature), space.policy, space.starts[part],
                      space.starts[part + 1] - space.starts[part]));
  }
}

int64_t PartitionStore::edge_position(int64_t eid) {
  if (eids_are_positions_) {
    if (eid < first_edge_ || eid >= first_edge_ + eids_.rows())
      fail("edge {} is not in partition {} (it holds edges {}..{})", eid, part_, first_edge_,
           first_edge_ + eids_.rows() - 1);
    return eid - first_edge_;
  }
  std::call_once(inverted_, [this] {
    const int64_t n = eids_.rows();
    position_of_edge_.assign(n, -1);
    const int64_t* e = eids_.data<int64_t>();
    for (int64_t pos = 0; pos < n; ++pos) {
      const int64_t local = e[pos] - first_edge_;
      if (local < 0 || local >= n) fail("partition {}: eids.npy holds edge {} outside its range", part_, e[pos]);
      position_of_edge_[local] = pos;
    }
  });
  const int64_t local = eid - first_edge_;
  if (local < 0 || local >= static_cast<int64_t>(position_of_edge_.size()))
    fail("edge {} is not in partition {} (it holds edges {}..{})", eid, part_, first_edge_,
         first_edge_ + static_cast<int64_t>(position_of_edge_.size()) - 1);
  return position_of_edge_[local];
}

int64_t PartitionStore::node_of_position(int64_t position) const {
  const int64_t* p = indptr_.data<int64_t>();
  return static_cast<int64_t>(std::upper_bound(p, p + indptr_.rows(), position) - p) - 1;
}

LocalTensor* PartitionStore::find(const std::string& name) {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

LocalTensor& PartitionStore::get(const std::string& name) {
  LocalTensor* t = find(name);
  if (t == nullptr) fail("partition {} has no tensor named '{}'", part_, name);
  return *t;
}

LocalTensor& PartitionStore::add(LocalTensor tensor) {
  const std::string name = tensor.spec.name;
  auto [it, inserted] = tensors_.emplace(name, std::move(tensor));
  if (!inserted) fail("partition {} already has a tensor named '{}'", part_, name);
  return it->second;
}

void PartitionStore::remove(const std::string& name) { tensors_.erase(name); }

std::vector<std::string> PartitionStore::names() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_) out.push_back(name);
  return out;
}

}  // namespace tessera::store
