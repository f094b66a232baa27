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

namespace tessera::server {

// Frames: the partition's local node offsets (int64) -> reply: in-degrees.
constexpr net::RequestType kInDegrees = 7;
// Frames: edge ids of the partition -> reply: source ids, destination ids.
constexpr net::RequestType kFindEdges = 8;
// iarg = count -> reply: the local offsets (int64) of the `count` nodes of
// largest in-degree, largest first, ties by offset.
constexpr net::RequestType kTopInDegree = 17;
// Frames: homogeneous node IDs (any partition's) -> reply: how many of this
// partition's edges start at each (its share of their out-degrees).
constexpr net::RequestType kOutDegrees = 21;
// Frames: sources, destinations (the partition's nodes, homogeneous IDs)
// -> reply: per pair, 1 if the graph has an edge from source to destination.
constexpr net::RequestType kHasEdges = 22;

// How many of the `num_edges` sources in `sources` are each of nodes[0..n),
// IDs of a graph of `num_nodes`. One pass over the edges; a dense count
// when the nodes are many, a sorted lookup when they are few.
// Whether local node `dst` of a partition's CSC has an in-edge from `src`.
bool has_in_edge(const int64_t* indptr, const int64_t* indices, int64_t dst, int64_t src);

std::vector<int64_t> count_sources(const int64_t* sources, int64_t num_edges, const int64_t* nodes, int64_t n,
                                   int64_t num_nodes);

}  // namespace tessera::server
