// One partition as a machine's processes hold it: the in-edge CSC of the nodes it owns and its feature arrays,
// all mapped read-only from the partition's .npy files (so every process of the machine shares the same page
// cache), plus the tensors created at run time, by name.
//
// The store owns its mappings and its LocalTensors; references and pointers it returns stay valid until that
// tensor is removed or the store is destroyed, and Arrays copied out keep their memory alive on their own. It
// keeps no reference to the config or book. The CSC accessors and edge_position() (whose lazy inversion runs
// once, under std::call_once) may be used from several threads; the tensor table (find, get, add, remove,
// names) has no lock and belongs to one thread. Errors are tessera::Error naming the file or partition: a
// missing partition, arrays that disagree with the config, an edge not in this partition, a tensor name
// missing (get) or taken (add).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/partition/partition_book.h"
#include "tessera/partition/partition_config.h"
#include "tessera/store/tensor.h"

namespace tessera::store {

// Names of the partition's own arrays as tensors: "node/<ntype>/<feature>"
// and "edge/<src:rel:dst>/<feature>" (masks are features named *_mask),
// and "node/<ntype>/_ORIG_ID" / "edge/<etype>/_ORIG_ID".
// Each type's original IDs (new type-local ID -> original type-local ID).
constexpr const char* kOrigIdName = "_ORIG_ID";
std::string node_tensor_name(const std::string& ntype, const std::string& feature);
std::string edge_tensor_name(const std::string& etype, const std::string& feature);

class PartitionStore {
 public:
  PartitionStore(const PartitionConfig& config, const PartitionBook& book, int part);

  int part() const { return part_; }
  int64_t first_node() const { return first_node_; }  // homogeneous ID of local node 0
  int64_t first_edge() const { return first_edge_; }
  int64_t num_nodes() const { return indptr_.rows() - 1; }
  const Array& indptr() const { return indptr_; }    // [num_nodes + 1], local positions
  const Array& indices() const { return indices_; }  // source homogeneous IDs
  const Array& eids() const { return eids_; }        // edge IDs
  // True when eids[pos] == first_edge() + pos (homogeneous graphs), so the
  // edge ID of a position needs no lookup.
  bool eids_are_positions() const { return eids_are_positions_; }
  const Array& etypes() const { return etypes_; }    // int32 edge types, or empty

  // Position of edge `eid` in the CSC arrays, and the local node whose
  // in-edge list holds a position (inverted lazily, once).
  int64_t edge_position(int64_t eid);
  int64_t node_of_position(int64_t position) const;

  LocalTensor* find(const std::string& name);
  LocalTensor& get(const std::string& name);  // throws naming the partition
  LocalTensor& add(LocalTensor tensor);       // throws if the name exists
  void remove(const std::string& name);
  std::vector<std::string> names() const;

 private:
  int part_;
  int64_t first_node_ = 0, first_edge_ = 0;
  Array indptr_, indices_, eids_, etypes_;
  bool eids_are_positions_ = false;
  std::vector<int64_t> position_of_edge_;
  std::once_flag inverted_;
  std::map<std::string, LocalTensor> tensors_;
};

}  // namespace tessera::store
