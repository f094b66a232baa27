#include "tessera/distributed/dist_graph.h"

#include <algorithm>

#include "net/transport.h"
#include "server/graph_service.h"
#include "tessera/store/partition_store.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Splits homogeneous IDs by owning partition, given each partition's first ID.
std::vector<std::vector<int64_t>> split_homogeneous(const std::vector<int64_t>& ids,
                                                    const std::vector<int64_t>& part_starts,
                                                    std::vector<std::vector<int64_t>>* positions, const char* what) {
  const int parts = static_cast<int>(part_starts.size()) - 1;
  std::vector<std::vector<int64_t>> out(parts);
  positions->assign(parts, {});
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= part_starts.back()) fail("{} {} is out of range (the graph has {})", what, id, part_starts.back());
    const int p = static_cast<int>(std::upper_bound(part_starts.begin() + 1, part_starts.end(), id) -
                                   part_starts.begin()) - 1;
    out[p].push_back(id - part_starts[p]);
    (*positions)[p].push_back(static_cast<int64_t>(i));
  }
  return out;
}

// First homogeneous node (edge) ID of each partition, and the total at the end.
std::vector<int64_t> part_starts(const PartitionConfig& config, bool nodes) {
  std::vector<int64_t> starts;
  for (int p = 0; p < config.num_parts; ++p)
    starts.push_back(nodes ? config.part_nodes(p).first : config.part_edges(p).first);
  starts.push_back(nodes ? config.num_nodes : config.num_edges);
  return starts;
}

}  // namespace

DistGraph::DistGraph(Context& ctx) : ctx_(&ctx) {}

int64_t DistGraph::num_nodes(const std::string& ntype) const {
  if (ntype.empty()) return ctx_->config().num_nodes;
  return ctx_->book().space("node:" + ntype).size();
}

int64_t DistGraph::num_edges(const std::string& etype) const {
  if (etype.empty()) return ctx_->config().num_edges;
  return ctx_->book().space("edge:" + etype).size();
}

const std::string& DistGraph::only_type(const std::vector<std::string>& types, const std::string& given,
                                        const char* kind) const {
  if (!given.empty()) return given;
  if (types.size() != 1) fail("the graph has {} {} types; name the one you mean", types.size(), kind);
  return types[0];
}

DistTensor DistGraph::ndata(const std::string& name, const std::string& ntype) const {
  return DistTensor::open(*ctx_, store::node_tensor_name(only_type(ntypes(), ntype, "node"), name));
}

DistTensor DistGraph::edata(const std::string& name, const std::string& etype) const {
  return DistTensor::open(*ctx_, store::edge_tensor_name(only_type(etypes(), etype, "edge"), name));
}

std::vector<int64_t> DistGraph::in_degrees(const std::vector<int64_t>& nodes) const {
  const PartitionConfig& config = ctx_->config();
  const std::vector<int64_t> starts = part_starts(config, /*nodes=*/true);
  std::vector<std::vector<int64_t>> positions;
  auto local = split_homogeneous(nodes, starts, &positions, "node");
  std::vector<int64_t> out(nodes.size());
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < config.num_parts; ++p) {
    if (local[p].empty()) continue;
    if (p == ctx_->local_part()) {
      const int64_t* indptr = ctx_->local().indptr().data<int64_t>();
      for (size_t i = 0; i < local[p].size(); ++i)
        out[positions[p][i]] = indptr[local[p][i] + 1] - indptr[local[p][i]];
      continue;
    }
    net::Header h = net::make_header(server::kInDegrees, 0, "");
    net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(local[p].size())});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(local[p])));
    requests.emplace_back(p, ctx_->client().send(ctx_->server_for(p), h, std::move(frames)));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(ctx_->client().wait({id})[0]);
    const int64_t* degrees = reply.frames.at(0).data<int64_t>();
    for (size_t i = 0; i < positions[p].size(); ++i) out[positions[p][i]] = degrees[i];
  }
  return out;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> DistGraph::find_edges(const std::vector<int64_t>& eids) const {
  const PartitionConfig& config = ctx_->config();
  const std::vector<int64_t> starts = part_starts(config, /*nodes=*/false);
  std::vector<std::vector<int64_t>> positions;
  auto local = split_homogeneous(eids, starts, &positions, "edge");
  std::vector<int64_t> src(eids.size()), dst(eids.size());
  std::vector<std::pair<int, uint64_t>> requests;
  for (int p = 0; p < config.num_parts; ++p) {
    if (local[p].empty()) continue;
    if (p == ctx_->local_part()) {
      store::PartitionStore& part = ctx_->local();
      const int64_t* indices = part.indices().data<int64_t>();
      for (size_t i = 0; i < local[p].size(); ++i) {
        const int64_t pos = part.edge_position(local[p][i] + starts[p]);
        src[positions[p][i]] = indices[pos];
        dst[positions[p][i]] = part.first_node() + part.node_of_position(pos);
      }
      continue;
    }
    std::vector<int64_t> global(local[p]);
    for (auto& e : global) e += starts[p];
    net::Header h = net::make_header(server::kFindEdges, 0, "");
    net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(global.size())});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(global)));
    requests.emplace_back(p, ctx_->client().send(ctx_->server_for(p), h, std::move(frames)));
  }
  for (auto [p, id] : requests) {
    const net::Reply reply = std::move(ctx_->client().wait({id})[0]);
    const int64_t* s = reply.frames.at(0).data<int64_t>();
    const int64_t* d = reply.frames.at(1).data<int64_t>();
    for (size_t i = 0; i < positions[p].size(); ++i) {
      src[positions[p][i]] = s[i];
      dst[positions[p][i]] = d[i];
    }
  }
  return {std::move(src), std::move(dst)};
}

}  // namespace tessera::distributed
