#include "server/graph_service.h"

#include <algorithm>

#include <fmt/format.h>

#include "server/server_state.h"
#include "tessera/base/error.h"

namespace tessera::server {
namespace {

// The edge type a request counts (its iarg is the type + 1; 0 counts every type).
int requested_etype(const ServerState& state, const net::Request& request) {
  const int64_t iarg = request.header.iarg;  // checked before the - 1, which would overflow at INT64_MIN
  const auto num_etypes = static_cast<int64_t>(state.config.etypes.size());
  if (iarg < 0 || iarg > num_etypes)
    throw net::ProtocolError(fmt::format("edge type {} is out of range (the graph has {}; iarg is the type + 1)",
                                         iarg, num_etypes));
  return static_cast<int>(iarg) - 1;
}

net::Frames serve_in_degrees(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* nodes = net::ids_frame(request, 0, &n);
  const int etype = requested_etype(state, request);
  std::vector<int64_t> degrees(n);
  for (int64_t i = 0; i < n; ++i) {
    if (nodes[i] < 0 || nodes[i] >= partition.num_nodes())
      fail("local node {} is out of range (partition {} owns {})", nodes[i], state.env.machine_id,
           partition.num_nodes());
    degrees[i] = in_degree(partition, nodes[i], etype);
  }
  net::set_shape(reply, DType::kInt64, {n});
  net::Frames frames;
  frames.push_back(net::frame_of(std::move(degrees)));
  return frames;
}

net::Frames serve_top_in_degree(ServerState& state, net::Request& request, net::Header* reply) {
  const int64_t n = state.partition->num_nodes(), count = request.header.iarg;
  int64_t first = 0, end = n;
  if (!request.frames.empty()) {
    if (request.frames.size() != 1 || request.frames[0].size() != 2 * sizeof(int64_t))
      throw net::ProtocolError("the range of nodes of largest in-degree is one frame of two int64 offsets");
    first = request.frames[0].data<int64_t>()[0];
    end = request.frames[0].data<int64_t>()[1];
    if (first < 0 || first > end || end > n)
      throw net::ProtocolError(fmt::format("local offsets [{}, {}) are not a range of a partition of {}", first, end, n));
  }
  if (count < 0 || count > end - first)
    throw net::ProtocolError(
        fmt::format("asked for the {} nodes of largest in-degree of a range of {} nodes", count, end - first));
  const int64_t* indptr = state.partition->indptr().data<int64_t>();
  std::vector<int64_t> nodes(static_cast<size_t>(end - first));
  for (int64_t i = first; i < end; ++i) nodes[i - first] = i;
  // Largest first; ties by offset, so every trainer caches the same nodes.
  std::partial_sort(nodes.begin(), nodes.begin() + count, nodes.end(), [indptr](int64_t a, int64_t b) {
    const int64_t da = indptr[a + 1] - indptr[a], db = indptr[b + 1] - indptr[b];
    return da != db ? da > db : a < b;
  });
  nodes.resize(count);
  net::set_shape(reply, DType::kInt64, {count});
  net::Frames frames;
  frames.push_back(net::frame_of(std::move(nodes)));
  return frames;
}

net::Frames serve_out_degrees(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* nodes = net::ids_frame(request, 0, &n);
  const int64_t num_nodes = state.config.num_nodes;
  for (int64_t i = 0; i < n; ++i)
    if (nodes[i] < 0 || nodes[i] >= num_nodes)
      throw net::ProtocolError(fmt::format("node {} is out of range (the graph has {})", nodes[i], num_nodes));
  std::vector<int64_t> counts = count_sources(partition, nodes, n, num_nodes, requested_etype(state, request));
  net::set_shape(reply, DType::kInt64, {n});
  net::Frames frames;
  frames.push_back(net::frame_of(std::move(counts)));
  return frames;
}

net::Frames serve_has_edges(ServerState& state, net::Request& request, net::Header* reply) {
  const store::PartitionStore& partition = *state.partition;
  int64_t n = 0, m = 0;
  const int64_t* src = net::ids_frame(request, 0, &n);
  const size_t bytes = static_cast<size_t>(n) * sizeof(int64_t);
  if (request.frames.size() < 2 || request.frames.size() > 3 || request.frames[1].size() != bytes ||
      (request.frames.size() == 3 && request.frames[2].size() != bytes))
    throw net::ProtocolError("has-edges needs as many destinations (and edge types, if any) as sources");
  const int64_t* dst = request.frames[1].data<int64_t>();
  const int64_t* etypes = request.frames.size() == 3 ? request.frames[2].data<int64_t>() : nullptr;
  m = partition.num_nodes();
  std::vector<int64_t> found(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t local = dst[i] - partition.first_node();
    if (local < 0 || local >= m)
      throw net::ProtocolError(fmt::format("node {} is not in partition {}", dst[i], state.env.machine_id));
    found[i] = has_in_edge(partition, local, src[i], etypes == nullptr ? -1 : etypes[i]);
  }
  net::set_shape(reply, DType::kInt64, {n});
  net::Frames frames;
  frames.push_back(net::frame_of(std::move(found)));
  return frames;
}

net::Frames serve_find_edges(ServerState& state, net::Request& request, net::Header* reply) {
  store::PartitionStore& partition = *state.partition;
  int64_t n = 0;
  const int64_t* eids = net::ids_frame(request, 0, &n);
  std::vector<int64_t> src(n), dst(n);
  const int64_t* indices = partition.indices().data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pos = partition.edge_position(eids[i]);
    src[i] = indices[pos];
    dst[i] = partition.first_node() + partition.node_of_position(pos);
  }
  net::set_shape(reply, DType::kInt64, {n});
  net::Frames frames;
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

namespace {

// Whether edge `e` has type `etype` (-1: any); `etypes` is null on a graph of one type, whose type is 0.
bool of_type(const int32_t* etypes, int64_t e, int etype) {
  if (etype < 0) return true;
  return etypes == nullptr ? etype == 0 : etypes[e] == etype;
}

const int32_t* etypes_of(const store::PartitionStore& partition) {
  return partition.etypes().empty_handle() ? nullptr : partition.etypes().data<int32_t>();
}

}  // namespace

int64_t in_degree(const store::PartitionStore& partition, int64_t local, int etype) {
  const int64_t* indptr = partition.indptr().data<int64_t>();
  const int32_t* etypes = etypes_of(partition);
  if (etype < 0 || etypes == nullptr) return of_type(etypes, 0, etype) ? indptr[local + 1] - indptr[local] : 0;
  int64_t count = 0;
  for (int64_t e = indptr[local]; e < indptr[local + 1]; ++e) count += etypes[e] == etype;
  return count;
}

bool has_in_edge(const store::PartitionStore& partition, int64_t local, int64_t src, int64_t etype) {
  const int64_t* indptr = partition.indptr().data<int64_t>();
  const int64_t* indices = partition.indices().data<int64_t>();
  const int32_t* etypes = etypes_of(partition);
  for (int64_t e = indptr[local]; e < indptr[local + 1]; ++e)
    if (indices[e] == src && of_type(etypes, e, static_cast<int>(etype))) return true;
  return false;
}

std::vector<int64_t> count_sources(const store::PartitionStore& partition, const int64_t* nodes, int64_t n,
                                   int64_t num_nodes, int etype) {
  return count_sources(partition.indices().data<int64_t>(), etypes_of(partition), partition.indices().rows(), nodes,
                       n, num_nodes, etype);
}

std::vector<int64_t> count_sources(const int64_t* sources, const int32_t* etypes, int64_t num_edges,
                                   const int64_t* nodes, int64_t n, int64_t num_nodes, int etype) {
  std::vector<int64_t> out(n, 0);
  if (n == 0) return out;
  if (n * 16 >= num_nodes) {  // many nodes: count every source once
    std::vector<int64_t> all(num_nodes, 0);
    for (int64_t e = 0; e < num_edges; ++e)
      if (of_type(etypes, e, etype)) ++all[sources[e]];
    for (int64_t i = 0; i < n; ++i) out[i] = all[nodes[i]];
    return out;
  }
  std::vector<int64_t> sorted(nodes, nodes + n);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int64_t> counts(sorted.size(), 0);
  for (int64_t e = 0; e < num_edges; ++e) {
    if (!of_type(etypes, e, etype)) continue;
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), sources[e]);
    if (it != sorted.end() && *it == sources[e]) ++counts[it - sorted.begin()];
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = counts[std::lower_bound(sorted.begin(), sorted.end(), nodes[i]) - sorted.begin()];
  return out;
}

}  // namespace tessera::server
