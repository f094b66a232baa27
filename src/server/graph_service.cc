#include "server/graph_service.h"

#include <algorithm>

#include <fmt/format.h>

#include "server/server_state.h"
#include "tessera/base/error.h"

namespace tessera::server {
namespace {

Frames serve_in_degrees(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* nodes = ids_frame(request, 0, &n);
  const int64_t* indptr = partition.indptr().data<int64_t>();
  std::vector<int64_t> degrees(n);
  for (int64_t i = 0; i < n; ++i) {
    if (nodes[i] < 0 || nodes[i] >= partition.num_nodes())
      fail("local node {} is out of range (partition {} owns {})", nodes[i], state.env.machine_id,
           partition.num_nodes());
    degrees[i] = indptr[nodes[i] + 1] - indptr[nodes[i]];
  }
  net::set_shape(reply, DType::kInt64, {n});
  Frames frames;
  frames.push_back(net::frame_of(std::move(degrees)));
  return frames;
}

Frames serve_top_in_degree(ServerState& state, net::Request& request, net::Header* reply) {
  const int64_t n = state.partition->num_nodes(), count = request.header.iarg;
  if (count < 0 || count > n)
    throw net::ProtocolError(fmt::format("asked for the {} nodes of largest in-degree of a partition of {}", count, n));
  const int64_t* indptr = state.partition->indptr().data<int64_t>();
  std::vector<int64_t> nodes(n);
  for (int64_t i = 0; i < n; ++i) nodes[i] = i;
  // Largest first; ties by offset, so every trainer caches the same nodes.
  std::partial_sort(nodes.begin(), nodes.begin() + count, nodes.end(), [indptr](int64_t a, int64_t b) {
    const int64_t da = indptr[a + 1] - indptr[a], db = indptr[b + 1] - indptr[b];
    return da != db ? da > db : a < b;
  });
  nodes.resize(count);
  net::set_shape(reply, DType::kInt64, {count});
  Frames frames;
  frames.push_back(net::frame_of(std::move(nodes)));
  return frames;
}

Frames serve_find_edges(ServerState& state, net::Request& request, net::Header* reply) {
  store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* eids = ids_frame(request, 0, &n);
  std::vector<int64_t> src(n), dst(n);
  const int64_t* indices = partition.indices().data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = partition.edge_position(eids[i]);
    src[i] = indices[pos];
    dst[i] = partition.first_node() + partition.node_of_position(pos);
  }
  net::set_shape(reply, DType::kInt64, {n});
  Frames frames;
  frames.push_back(net::frame_of(std::move(src)));
  frames.push_back(net::frame_of(std::move(dst)));
  return frames;
}

[[maybe_unused]] const bool kGraphServices =
    partition_services().add(kInDegrees, "graph: in-degrees", serve_in_degrees) &&
    partition_services().add(kFindEdges, "graph: find edges", serve_find_edges) &&
    partition_services().add(kTopInDegree, "graph: top in-degree", serve_top_in_degree);

}  // namespace
}  // namespace tessera::server
