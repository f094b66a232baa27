#include "distributed/graph_queries.h"

#include <algorithm>
#include <utility>

#include "server/graph_service.h"
#include "tessera/base/error.h"
#include "tessera/store/partition_store.h"

namespace tessera::distributed {
namespace {

// IDs split by owning partition: partition-local offsets and where each came from.
struct ByOwner {
  std::vector<std::vector<int64_t>> offsets, positions;
};

ByOwner split_by_owner(const PartitionConfig& config, bool nodes, const int64_t* ids, int64_t n, const char* what) {
  std::vector<int64_t> starts;
  for (int p = 0; p < config.num_parts; ++p) starts.push_back(nodes ? config.part_nodes(p).first : config.part_edges(p).first);
  starts.push_back(nodes ? config.num_nodes : config.num_edges);
  ByOwner out;
  out.offsets.resize(config.num_parts);
  out.positions.resize(config.num_parts);
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= starts.back()) fail("{} {} is out of range (the graph has {})", what, ids[i], starts.back());
    const int p = static_cast<int>(std::upper_bound(starts.begin() + 1, starts.end(), ids[i]) - starts.begin()) - 1;
    out.offsets[p].push_back(ids[i] - starts[p]);
    out.positions[p].push_back(i);
  }
  return out;
}

uint64_t send_ids(Context& ctx, net::Client* client, int rotation, int part, net::RequestType type,
                  std::vector<int64_t> ids, int etype = -1) {
  if (client == nullptr) fail("internal: partition {} must be asked but there is no connection to the servers", part);
  net::Header h = net::make_header(type, 0, "");
  h.iarg = etype + 1;  // the degree requests' edge type
  net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(ids.size())});
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::move(ids)));
  return client->send(ctx.server_for(part, rotation), h, std::move(frames));
}

// The reply's frame `k` as `count` int64s, or an error naming the query.
const int64_t* reply_ids(const net::Reply& reply, size_t k, size_t count, int part, const char* query) {
  if (reply.frames.size() <= k || reply.frames[k].size() != count * sizeof(int64_t))
    fail("{}: partition {}'s reply is malformed", query, part);
  return reply.frames[k].data<int64_t>();
}

void check_etype(const Context& ctx, int etype) {
  const auto count = static_cast<int>(ctx.config().etypes.size());
  if (etype < -1 || etype >= count) fail("edge type {} is out of range (the graph has {})", etype, count);
}

}  // namespace

std::vector<int64_t> in_degrees(Context& ctx, net::Client* client, int rotation, const int64_t* nodes, int64_t n,
                                int etype) {
  check_etype(ctx, etype);
  ByOwner split = split_by_owner(ctx.config(), /*nodes=*/true, nodes, n, "node");
  std::vector<int64_t> out(n);
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (split.offsets[p].empty()) continue;
    if (p == ctx.local_part()) {
      for (size_t i = 0; i < split.offsets[p].size(); ++i)
        out[split.positions[p][i]] = server::in_degree(ctx.local(), split.offsets[p][i], etype);
      continue;
    }
    requests.emplace_back(p, send_ids(ctx, client, rotation, p, server::kInDegrees, std::move(split.offsets[p]), etype));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(client->wait({id})[0]);
    const int64_t* degrees = reply_ids(reply, 0, split.positions[p].size(), p, "in-degrees");
    for (size_t i = 0; i < split.positions[p].size(); ++i) out[split.positions[p][i]] = degrees[i];
  }
  return out;
}

std::vector<int64_t> out_degrees(Context& ctx, net::Client* client, int rotation, const int64_t* nodes, int64_t n,
                                 int etype) {
  check_etype(ctx, etype);
  const int64_t num_nodes = ctx.config().num_nodes;
  for (int64_t i = 0; i < n; ++i)
    if (nodes[i] < 0 || nodes[i] >= num_nodes) fail("node {} is out of range (the graph has {})", nodes[i], num_nodes);
  std::vector<int64_t> out(n, 0);
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (n == 0) break;
    if (p == ctx.local_part()) {
      const std::vector<int64_t> counts = server::count_sources(ctx.local(), nodes, n, num_nodes, etype);
      for (int64_t i = 0; i < n; ++i) out[i] += counts[i];
      continue;
    }
    requests.emplace_back(p, send_ids(ctx, client, rotation, p, server::kOutDegrees, std::vector<int64_t>(nodes, nodes + n),
                                      etype));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(client->wait({id})[0]);
    const int64_t* counts = reply_ids(reply, 0, n, p, "out-degrees");
    for (int64_t i = 0; i < n; ++i) out[i] += counts[i];
  }
  return out;
}

void find_edges(Context& ctx, net::Client* client, int rotation, const int64_t* eids, int64_t n, int64_t* src,
                int64_t* dst) {
  ByOwner split = split_by_owner(ctx.config(), /*nodes=*/false, eids, n, "edge");
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (split.offsets[p].empty()) continue;
    const int64_t first = ctx.config().part_edges(p).first;
    if (p == ctx.local_part()) {
      store::PartitionStore& part = ctx.local();
      const int64_t* indices = part.indices().data<int64_t>();
      for (size_t i = 0; i < split.offsets[p].size(); ++i) {
        const int64_t pos = part.edge_position(split.offsets[p][i] + first);
        src[split.positions[p][i]] = indices[pos];
        dst[split.positions[p][i]] = part.first_node() + part.node_of_position(pos);
      }
      continue;
    }
    for (int64_t& e : split.offsets[p]) e += first;
    requests.emplace_back(p, send_ids(ctx, client, rotation, p, server::kFindEdges, std::move(split.offsets[p])));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(client->wait({id})[0]);
    const size_t count = split.positions[p].size();
    const int64_t* s = reply_ids(reply, 0, count, p, "find edges");
    const int64_t* d = reply_ids(reply, 1, count, p, "find edges");
    for (size_t i = 0; i < count; ++i) {
      src[split.positions[p][i]] = s[i];
      dst[split.positions[p][i]] = d[i];
    }
  }
}

std::vector<bool> has_edges(Context& ctx, net::Client* client, int rotation, const int64_t* src, const int64_t* dst,
                            int64_t n, const int64_t* etypes) {
  ByOwner split = split_by_owner(ctx.config(), /*nodes=*/true, dst, n, "node");
  const int64_t num_nodes = ctx.config().num_nodes;
  for (int64_t i = 0; i < n; ++i) {
    if (src[i] < 0 || src[i] >= num_nodes) fail("node {} is out of range (the graph has {})", src[i], num_nodes);
    if (etypes != nullptr) check_etype(ctx, static_cast<int>(etypes[i]));
  }
  std::vector<bool> out(n, false);
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    const std::vector<int64_t>& positions = split.positions[p];
    if (positions.empty()) continue;
    if (p == ctx.local_part()) {
      const store::PartitionStore& part = ctx.local();
      for (size_t i = 0; i < positions.size(); ++i)
        out[positions[i]] = server::has_in_edge(part, split.offsets[p][i], src[positions[i]],
                                                etypes == nullptr ? -1 : etypes[positions[i]]);
      continue;
    }
    if (client == nullptr) fail("internal: partition {} must be asked but there is no connection to the servers", p);
    std::vector<int64_t> s(positions.size()), d(positions.size()), t;
    for (size_t i = 0; i < positions.size(); ++i) {
      s[i] = src[positions[i]];
      d[i] = dst[positions[i]];
      if (etypes != nullptr) t.push_back(etypes[positions[i]]);
    }
    net::Header h = net::make_header(server::kHasEdges, 0, "");
    net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(s.size())});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(s)));
    frames.push_back(net::frame_of(std::move(d)));
    if (etypes != nullptr) frames.push_back(net::frame_of(std::move(t)));
    requests.emplace_back(p, client->send(ctx.server_for(p, rotation), h, std::move(frames)));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(client->wait({id})[0]);
    const int64_t* found = reply_ids(reply, 0, split.positions[p].size(), p, "has edges");
    for (size_t i = 0; i < split.positions[p].size(); ++i) out[split.positions[p][i]] = found[i] != 0;
  }
  return out;
}

}  // namespace tessera::distributed
