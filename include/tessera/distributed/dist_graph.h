// DistGraph: the partitioned graph as a trainer sees it. Structure queries on the local partition are answered
// from memory, others by its servers, one request per owning partition. Node and edge IDs here are the homogeneous (reshuffled) IDs; feature and
// embedding tensors are indexed per type, as in DGL.
//
// A DistGraph is a light view that keeps a pointer to its Context, which must outlive it and the DistTensor
// handles it returns; query results are new vectors the caller owns. Nothing here is collective except
// barrier(). Queries go through the calling thread's connection (Context::client()), so any thread may ask. Errors are
// tessera::Error: an ID out of range (naming the ID and the graph's size), a type omitted on a graph with
// several, an unknown feature name, or a server that does not answer.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_tensor.h"

namespace tessera::distributed {

class DistGraph {
 public:
  explicit DistGraph(Context& ctx);

  const std::string& graph_name() const { return ctx_->config().graph_name; }
  const std::vector<std::string>& ntypes() const { return ctx_->config().ntypes; }
  const std::vector<std::string>& etypes() const { return ctx_->config().etypes; }
  // All nodes / edges, or those of one type ("" for all).
  int64_t num_nodes(const std::string& ntype = "") const;
  int64_t num_edges(const std::string& etype = "") const;
  const PartitionBook& book() const { return ctx_->book(); }

  // A node (edge) feature of a type; the type may be omitted when the graph
  // has one. Names as in the partition: "feat", "label", "train_mask", ...
  DistTensor ndata(const std::string& name, const std::string& ntype = "") const;
  DistTensor edata(const std::string& name, const std::string& etype = "") const;

  // Node and edge IDs below are homogeneous. `etype` (canonical "src:rel:dst")
  // restricts a query to the edges of that type; "" means every edge.
  std::vector<int64_t> in_degrees(const std::vector<int64_t>& nodes, const std::string& etype = "") const;
  // Out-degrees ask every partition (a node's out-edges lie with their destinations).
  std::vector<int64_t> out_degrees(const std::vector<int64_t>& nodes, const std::string& etype = "") const;
  // (sources, destinations) of edges, by edge ID.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> find_edges(const std::vector<int64_t>& eids) const;
  // Per pair, whether an edge src[i] -> dst[i] exists.
  std::vector<bool> has_edges(const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                              const std::string& etype = "") const;
  void barrier() const { ctx_->barrier(); }

 private:
  int etype_id(const std::string& etype) const;  // -1 for ""
  const std::string& only_type(const std::vector<std::string>& types, const std::string& given, const char* kind) const;
  Context* ctx_;
};

}  // namespace tessera::distributed
