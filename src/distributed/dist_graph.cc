#include "tessera/distributed/dist_graph.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "distributed/graph_queries.h"
#include "tessera/store/partition_store.h"
#include "tessera/base/error.h"

namespace tessera::distributed {

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

int DistGraph::etype_id(const std::string& etype) const {
  if (etype.empty()) return -1;
  const auto it = std::find(etypes().begin(), etypes().end(), etype);
  if (it == etypes().end()) fail("edge type {} is not in the graph (it has {})", etype, fmt::join(etypes(), ", "));
  return static_cast<int>(it - etypes().begin());
}

std::vector<int64_t> DistGraph::in_degrees(const std::vector<int64_t>& nodes, const std::string& etype) const {
  return distributed::in_degrees(*ctx_, ctx_->standalone() ? nullptr : &ctx_->client(), 0, nodes.data(),
                                 static_cast<int64_t>(nodes.size()), etype_id(etype));
}

std::vector<int64_t> DistGraph::out_degrees(const std::vector<int64_t>& nodes, const std::string& etype) const {
  return distributed::out_degrees(*ctx_, ctx_->standalone() ? nullptr : &ctx_->client(), 0, nodes.data(),
                                  static_cast<int64_t>(nodes.size()), etype_id(etype));
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> DistGraph::find_edges(const std::vector<int64_t>& eids) const {
  std::vector<int64_t> src(eids.size()), dst(eids.size());
  distributed::find_edges(*ctx_, ctx_->standalone() ? nullptr : &ctx_->client(), 0, eids.data(),
                          static_cast<int64_t>(eids.size()), src.data(), dst.data());
  return {std::move(src), std::move(dst)};
}

std::vector<bool> DistGraph::has_edges(const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                                       const std::string& etype) const {
  if (src.size() != dst.size()) fail("has_edges: {} sources but {} destinations", src.size(), dst.size());
  const int id = etype_id(etype);
  const std::vector<int64_t> etypes(id < 0 ? 0 : src.size(), id);
  return distributed::has_edges(*ctx_, ctx_->standalone() ? nullptr : &ctx_->client(), 0, src.data(), dst.data(),
                                static_cast<int64_t>(src.size()), id < 0 ? nullptr : etypes.data());
}

}  // namespace tessera::distributed
