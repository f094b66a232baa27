// The partitioned graph's JSON config (<out>/<graph>.json) and the partition book it defines: after
// reshuffling, partition p owns one contiguous range of homogeneous node IDs per node type, laid out
// partition-major, so mapping an ID to its owner is a binary search over a few boundaries.
//
// A PartitionConfig is a plain value that owns its strings and tables; paths in it are relative to dir (see
// path()). After load() it is not changed, and its const methods may be called from any number of threads.
// load() throws tessera::Error naming the file and the field: unreadable JSON, a missing or mistyped field,
// ranges that do not tile the ID spaces, an etype naming an unknown node type. The lookups do not check their
// arguments: node_owner() and node_type_of() expect an ID below num_nodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/base/array.h"

namespace tessera {

using IdRange = std::pair<int64_t, int64_t>;  // [first, last)

struct ArraySchema {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> row_shape;  // shape without the leading row dimension
};

struct PartitionFiles {
  std::string node_feats, edge_feats, part_graph, orig_nids, orig_eids;  // relative to the config's folder
};

struct PartitionConfig {
  std::string dir;  // folder holding the config; paths are relative to it
  std::string graph_name, part_method;
  int num_parts = 0;
  int halo_hops = 1;
  int64_t num_nodes = 0, num_edges = 0;
  std::vector<std::string> ntypes;  // by type id
  std::vector<std::string> etypes;  // canonical "src:rel:dst", by type id
  std::vector<std::vector<IdRange>> node_map;  // [ntype][part]
  std::vector<std::vector<IdRange>> edge_map;  // [etype][part]
  std::map<std::string, std::map<std::string, ArraySchema>> node_feat_schema;  // ntype -> name -> schema
  std::map<std::string, std::map<std::string, ArraySchema>> edge_feat_schema;  // etype -> name -> schema
  std::map<std::string, std::string> extra;       // dataset-level arrays
  // Link prediction's held-out node pairs by split ("valid", "test"):
  // int64 [n, 2] .npy files in the partition's node IDs.
  std::map<std::string, std::string> held_out_edges;
  std::map<std::string, std::string> node_names;  // ntype -> names file
  std::string relation_names;                     // KG relation names file, or ""
  std::vector<PartitionFiles> parts;

  // Loads and checks the config's own consistency (ranges tile the ID spaces
  // in partition-major order). Errors name the file and the field.
  static PartitionConfig load(const std::string& json_path);
  std::string to_json() const;

  std::string path(const std::string& relative) const;
  IdRange part_nodes(int part) const;  // all owned node IDs of a partition
  IdRange part_edges(int part) const;
  int node_owner(int64_t node_id) const;
  int node_type_of(int64_t node_id) const;  // by range lookup
  int etype_src(int etype) const;           // source node type id
  int etype_dst(int etype) const;
  int64_t etype_count(int etype) const;     // edges of that type over all partitions

  // Labelled node types (those with a train_mask) that no edge of any type points
  // to: message-passing layers send them nothing, so a model sees only their
  // own inputs. Usually a relation whose reverse is missing.
  std::vector<std::string> labelled_types_without_in_edges() const;
  // The warning `tessera partition` and the trainers print for each of them.
  static std::string without_in_edges_warning(const std::string& ntype);

 private:
  std::vector<int64_t> part_node_starts_;  // part p owns [starts[p], starts[p+1])
  void build_index();
};

}  // namespace tessera
