// Graph queries the partition servers answer about their partition's
// structure: in-degrees, the ends of edges, and the nodes of largest
// in-degree (which the remote-row cache keeps). Request types and frames;
// the handlers are in graph_service.cc, the client side in
// distributed/dist_graph.cc and distributed/remote_row_cache.cc.
//
// Internal header.
#pragma once

#include "net/message.h"

namespace tessera::server {

// Frames: the partition's local node offsets (int64) -> reply: in-degrees.
constexpr net::RequestType kInDegrees = 7;
// Frames: edge ids of the partition -> reply: source ids, destination ids.
constexpr net::RequestType kFindEdges = 8;
// iarg = count -> reply: the local offsets (int64) of the `count` nodes of
// largest in-degree, largest first, ties by offset.
constexpr net::RequestType kTopInDegree = 17;

}  // namespace tessera::server
