// Structure queries on the partitioned graph (degrees, the ends of edges),
// routed to the partitions that own the IDs: the local partition answers
// from memory, the others by one request per owner, sent together and
// awaited together. DistGraph's methods, the Python graph services and the
// loaders' sampler threads all come here, each through its own connection.
//
// Internal header. IDs are homogeneous; one out of range throws
// tessera::Error naming it and the graph's size. A null client is allowed
// only when every ID is local (standalone mode).
#pragma once

#include <cstdint>
#include <vector>

#include "net/transport.h"
#include "tessera/distributed/context.h"

namespace tessera::distributed {

// Degrees count the edges of type `etype` only, or every edge when it is -1.
std::vector<int64_t> in_degrees(Context& ctx, net::Client* client, int rotation, const int64_t* nodes, int64_t n,
                                int etype = -1);
// Out-degrees ask every partition, since a node's out-edges lie wherever
// their destinations do (partitions store in-edges).
std::vector<int64_t> out_degrees(Context& ctx, net::Client* client, int rotation, const int64_t* nodes, int64_t n,
                                 int etype = -1);
// Writes the source and destination of each edge to src[i], dst[i].
void find_edges(Context& ctx, net::Client* client, int rotation, const int64_t* eids, int64_t n, int64_t* src,
                int64_t* dst);

// Per pair, whether the graph has an edge src[i] -> dst[i] (of type
// etypes[i], when etypes is given), asked of the destinations' owners.
std::vector<bool> has_edges(Context& ctx, net::Client* client, int rotation, const int64_t* src, const int64_t* dst,
                            int64_t n, const int64_t* etypes = nullptr);

}  // namespace tessera::distributed
