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

Frames serve_out_degrees(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* nodes = ids_frame(request, 0, &n);
  const int64_t num_nodes = state.config.num_nodes;
  for (int64_t i = 0; i < n; ++i)
    if (nodes[i] < 0 || nodes[i] >= num_nodes)
      throw net::ProtocolError(fmt::format("node {} is out of range (the graph has {})", nodes[i], num_nodes));
  std::vector<int64_t> counts =
      count_sources(partition.indices().data<int64_t>(), partition.indices().rows(), nodes, n, num_nodes);
  net::set_shape(reply, DType::kInt64, {n});
  Frames frames;
  frames.push_back(net::frame_of(std::move(counts)));
  return frames;
}

Frames serve_has_edges(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0, m = 0;
  const int64_t* src = ids_frame(request, 0, &n);
  if (request.frames.size() != 2 || request.frames[1].size() != static_cast<size_t>(n) * sizeof(int64_t))
    throw net::ProtocolError("has-edges needs as many destinations as sources");
  const int64_t* dst = request.frames[1].data<int64_t>();
  m = partition.num_nodes();
  std::vector<int64_t> found(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t local = dst[i] - partition.first_node();
    if (local < 0 || local >= m)
      throw net::ProtocolError(fmt::format("node {} is not in partition {}", dst[i], state.env.machine_id));
    found[i] = has_in_edge(partition.indptr().data<int64_t>(), partition.indices().data<int64_t>(), local, src[i]);
  }
  net::set_shape(reply, DType::kInt64, {n});
  Frames frames;
  frames.push_back(net::frame_of(std::move(found)));
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
    partition_services().add(kOutDegrees, "graph: out-degrees", serve_out_degrees) &&
    partition_services().add(kHasEdges, "graph: has edges", serve_has_edges) &&
    partition_services().add(kTopInDegree, "graph: top in-degree", serve_top_in_degree);

}  // namespace

bool has_in_edge(const int64_t* indptr, const int64_t* indices, int64_t dst, int64_t src) {
  for (int64_t e = indptr[dst]; e < indptr[dst + 1]; ++e)
    if (indices[e] == src) return true;
  return false;
}

std::vector<int64_t> count_sources(const int64_t* sources, int64_t num_edges, const int64_t* nodes, int64_t n,
                                   int64_t num_nodes) {
  std::vector<int64_t> out(n, 0);
  if (n == 0) return out;
  if (n * 16 >= num_nodes) {  // many nodes: count every source once
    std::vector<int64_t> all(num_nodes, 0);
    for (int64_t e = 0; e < num_edges; ++e) ++all[sources[e]];
    for (int64_t i = 0; i < n; ++i) out[i] = all[nodes[i]];
    return out;
  }
  std::vector<int64_t> sorted(nodes, nodes + n);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int64_t> counts(sorted.size(), 0);
  for (int64_t e = 0; e < num_edges; ++e) {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), sources[e]);
    if (it != sorted.end() && *it == sources[e]) ++counts[it - sorted.begin()];
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = counts[std::lower_bound(sorted.begin(), sorted.end(), nodes[i]) - sorted.begin()];
  return out;
}

}  // namespace tessera::server
