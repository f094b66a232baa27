// Graph queries the partition servers answer about their partition's
// structure: in-degrees, out-edge counts, the ends of edges, and the nodes
// of largest in-degree (which the remote-row cache keeps). Request types and frames;
// the handlers are in graph_service.cc, the client side in
// distributed/dist_graph.cc and distributed/remote_row_cache.cc.
//
// Internal header.
#pragma once

#include <cstdint>
#include <vector>

#include "net/message.h"
#include "tessera/store/partition_store.h"

namespace tessera::server {

// Frames: the partition's local node offsets (int64), iarg = edge type + 1
// (0: every type) -> reply: in-degrees.
constexpr net::RequestType kInDegrees = 7;
// Frames: edge ids of the partition -> reply: source ids, destination ids.
constexpr net::RequestType kFindEdges = 8;
// iarg = count, and optionally a frame of two int64: the local offsets
// [first, end) to choose from (one node type's, on a heterogeneous graph;
// without it every node) -> reply: the local offsets (int64) of the `count`
// nodes of that range of largest in-degree (over every edge type), largest
// first, ties by offset.
constexpr net::RequestType kTopInDegree = 17;
// Frames: homogeneous node IDs (any partition's), iarg as kInDegrees ->
// reply: how many of this partition's edges (of that type) start at each
// (its share of their out-degrees).
constexpr net::RequestType kOutDegrees = 21;
// Frames: sources, destinations (the partition's nodes, homogeneous IDs) and
// optionally edge types -> reply: per pair, 1 if the graph has an edge from
// source to destination (of that type).
constexpr net::RequestType kHasEdges = 22;

// Below, `etype` -1 means every edge type; on a graph of one type, 0 is
// that type.

// In-edges (of `etype`) of the partition's local node `local`.
int64_t in_degree(const store::PartitionStore& partition, int64_t local, int etype);

// Whether local node `local` has an in-edge (of `etype`) from `src`.
bool has_in_edge(const store::PartitionStore& partition, int64_t local, int64_t src, int64_t etype);

// How many of the partition's edges (of `etype`) start at each of
// nodes[0..n), IDs of a graph of `num_nodes`. One pass over the edges; a
// dense count when the nodes are many, a sorted lookup when they are few.
std::vector<int64_t> count_sources(const store::PartitionStore& partition, const int64_t* nodes, int64_t n,
                                   int64_t num_nodes, int etype);
// The same over `num_edges` sources whose types are `etypes` (null: all 0).
std::vector<int64_t> count_sources(const int64_t* sources, const int32_t* etypes, int64_t num_edges,
                                   const int64_t* nodes, int64_t n, int64_t num_nodes, int etype);

}  // namespace tessera::server
