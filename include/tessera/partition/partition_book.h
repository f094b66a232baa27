// The partition book: which partition owns an ID, and where in that partition's arrays it lives. Tensors are
// indexed per type, as in DGL: a node type's (or edge type's) IDs run 0..count-1 across all partitions,
// partition-major, so ownership is a binary search over num_parts+1 bounds.
//
// A PartitionBook is an immutable value built from a PartitionConfig (it copies what it needs and keeps no
// reference to the config); IdSpace references it returns live as long as the book. Its const methods take no
// locks and may be called from any number of threads at once. Errors are tessera::Error: space() of an unknown
// policy (listing the known ones), and split(), homogeneous_node() or homogeneous_edge() of an ID out of range
// (naming the space and its size); owner(), typed_node() and typed_edge() report out-of-range IDs by -1 instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/partition/partition_config.h"

namespace tessera {

// One ID space: the nodes of a node type or the edges of an edge type.
struct IdSpace {
  std::string policy;            // "node:<ntype>" or "edge:<src:rel:dst>"
  bool is_node = true;
  int type = 0;                  // ntype or etype id
  std::vector<int64_t> starts;   // partition p owns type-local IDs [starts[p], starts[p+1])
  std::vector<int64_t> homogeneous_first;  // first homogeneous ID of the type in partition p

  int64_t size() const { return starts.back(); }
  int owner(int64_t id) const;   // -1 when out of range
  int64_t local_row(int64_t id, int part) const { return id - starts[part]; }
};

// IDs of one request split by owning partition, remembering where each came
// from so that the replies can be put back in order.
struct SplitIds {
  std::vector<std::vector<int64_t>> local_rows;  // [part] -> local rows
  std::vector<std::vector<int64_t>> positions;   // [part] -> positions in the request
};

class PartitionBook {
 public:
  explicit PartitionBook(const PartitionConfig& config);

  int num_parts() const { return num_parts_; }
  // Throws an Error listing the known policies when `policy` is unknown.
  const IdSpace& space(const std::string& policy) const;
  const IdSpace& node_space(int ntype) const { return spaces_.at(ntype); }
  const IdSpace& edge_space(int etype) const { return spaces_.at(num_ntypes_ + etype); }
  std::string node_policy(int ntype) const;
  std::string edge_policy(int etype) const;

  // Homogeneous node ID <-> (node type, type-local ID). Homogeneous IDs run
  // partition-major, type-minor, so one binary search over the (partition,
  // type) ranges finds both; typed_node's ntype is -1 for an ID out of range.
  struct TypedNode {
    int ntype = -1;
    int64_t id = 0;
  };
  TypedNode typed_node(int64_t homogeneous) const;
  int64_t homogeneous_node(int ntype, int64_t type_local) const;
  // The same for edges, whose homogeneous IDs also run partition-major,
  // type-minor: (edge type, type-local ID), etype -1 out of range; and back.
  struct TypedEdge {
    int etype = -1;
    int64_t id = 0;
  };
  TypedEdge typed_edge(int64_t homogeneous) const;
  int64_t homogeneous_edge(int etype, int64_t type_local) const;

  // Splits `ids` of a space by owner; an ID out of range throws naming `what`.
  SplitIds split(const IdSpace& space, const int64_t* ids, int64_t count, const std::string& what) const;

 private:
  int num_parts_ = 0;
  int num_ntypes_ = 0;
  int num_etypes_ = 0;
  std::vector<IdSpace> spaces_;  // node types, then edge types
  std::vector<int64_t> node_range_first_;  // (part, ntype) ranges in homogeneous order, then the end
  std::vector<int64_t> edge_range_first_;  // (part, etype) ranges in homogeneous order, then the end
};

}  // namespace tessera
