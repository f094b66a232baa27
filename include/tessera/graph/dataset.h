// The in-memory dataset every reader produces and the generators and the partitioner consume: typed nodes with
// their data, typed edges in type-local IDs, and the homogeneous ID space DGL uses (node types laid end to end
// in declaration order, so homogeneous ID = type offset + type-local ID).
//
// A Dataset is a plain value: it owns its Array handles, whose memory copies of the Dataset share (readers may
// leave arrays mapped read-only from their files). No locks: several threads may read one Dataset, but
// add_reverse_edges() and other changes need exclusive use. Only validate() checks the invariants; the accessors
// trust them. Errors are tessera::Error, prefixed by the source or dataset name: validate() on a broken
// invariant, node_type() of an unknown type, add_reverse_edges() on a dataset that already has reverse types.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/base/array.h"

namespace tessera {

struct NodeType {
  std::string name;
  int64_t count = 0;
  // Per-node arrays with `count` rows: "feat" (float32 [count, F]), "label"
  // (int64 [count], -1 = unlabelled), "year", ... any name.
  std::map<std::string, Array> data;
  // Type-local IDs of the split; empty handles when the type has no split.
  Array train, val, test;
  // Original names (KG entities, RDF URIs) by type-local ID; may be empty.
  std::vector<std::string> names;
};

struct EdgeType {
  std::string src_type, relation, dst_type;
  Array src, dst;                     // int64 [E], type-local IDs
  std::map<std::string, Array> data;  // per-edge arrays with E rows

  std::string canonical() const { return src_type + ":" + relation + ":" + dst_type; }
  int64_t count() const { return src.empty_handle() ? 0 : src.numel(); }
};

struct Dataset {
  std::string name;
  std::vector<NodeType> node_types;
  std::vector<EdgeType> edge_types;
  // Dataset-level arrays that are not per node or edge, for example a KG's
  // "valid_triples" / "test_triples" (int64 [n, 3]: head, relation, tail).
  std::map<std::string, Array> extra;
  // Link prediction's held-out node pairs ("valid", "test": int64 [n, 2],
  // homogeneous IDs), taken out of edge_types by hold_out_edges().
  std::map<std::string, Array> held_out_edges;
  std::vector<std::string> relation_names;  // KG relation names by relation id

  int node_type_index(const std::string& name) const;  // -1 when absent
  const NodeType& node_type(const std::string& name) const;
  int64_t num_nodes() const;
  int64_t num_edges() const;
  // offsets[t] = first homogeneous ID of node type t; offsets.back() = num_nodes.
  std::vector<int64_t> node_offsets() const;
  // Total training nodes over all types.
  int64_t num_train() const;

  // Checks every invariant (array shapes and dtypes, IDs in range, edge types
  // naming existing node types). `source` prefixes the messages.
  void validate(const std::string& source) const;
};

// Adds, for every edge type (s, r, d), its reverse (d, "rev-" + r, s) with
// the same edges turned around and no edge data, as DGL's R-GCN examples do
// for ogbn-mag and the RDF datasets: messages then flow both ways along
// every relation. Fails if a "rev-" type already exists.
void add_reverse_edges(Dataset* dataset);

// Renames node data, as "OLD=NEW[,OLD=NEW...]" (`tessera partition --rename`:
// DGL's example scripts read "features" and "labels"). Every node type
// holding OLD is renamed; fails naming the pair when none holds it, when NEW
// exists already, or for the split masks, whose names are fixed.
void rename_node_data(Dataset* dataset, const std::string& renames);

// Calls fn(etype, edge, u, v) for every edge in type order, with u and v the
// homogeneous IDs of its source and destination.
template <typename Fn>
void for_each_edge(const Dataset& d, Fn&& fn) {
  const std::vector<int64_t> offsets = d.node_offsets();
  for (size_t k = 0; k < d.edge_types.size(); ++k) {
    const EdgeType& e = d.edge_types[k];
    const int64_t so = offsets[d.node_type_index(e.src_type)];
    const int64_t dof = offsets[d.node_type_index(e.dst_type)];
    const int64_t* src = e.src.template data<int64_t>();
    const int64_t* dst = e.dst.template data<int64_t>();
    for (int64_t i = 0; i < e.count(); ++i) fn(static_cast<int>(k), i, so + src[i], dof + dst[i]);
  }
}

// The knowledge-graph convention: one node type "entity", one edge type
// "entity:triple:entity" whose edge array "relation" holds relation ids.
inline constexpr const char* kEntityType = "entity";
inline constexpr const char* kTripleRelation = "triple";
inline constexpr const char* kRelationField = "relation";

}  // namespace tessera
