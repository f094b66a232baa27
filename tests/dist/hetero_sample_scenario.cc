// `dist_worker hetero-sample`: per-edge-type sampling of a heterogeneous
// graph across partitions. Every trainer samples blocks for seeds of every
// node type (most of them owned by the other machine, so their sample comes
// back from its server) and checks each edge against the original dataset:
// it exists with that edge type, its endpoints have the type's node types,
// and each seed gets min(fanout, its in-degree of that type) edges per type.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "scenarios.h"
#include "net/transport.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/graph/dataset.h"
#include "tessera/io/dataset_io.h"
#include "tessera/sampling/block_builder.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/base/error.h"

namespace distributed = tessera::distributed;
namespace sampling = tessera::sampling;
using tessera::fail;

namespace {

constexpr int64_t kHeteroFanout = 2;

// New homogeneous node ID -> (type, original type-local ID).
std::vector<std::pair<int, int64_t>> original_nodes(distributed::Context& ctx, distributed::DistGraph& g) {
  std::vector<std::pair<int, int64_t>> out(ctx.config().num_nodes);
  for (size_t t = 0; t < ctx.config().ntypes.size(); ++t) {
    const std::string& ntype = ctx.config().ntypes[t];
    const distributed::DistTensor orig = g.ndata("_ORIG_ID", ntype);
    std::vector<int64_t> ids(orig.num_rows());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
    const tessera::Array o = orig.pull(ids);
    for (size_t i = 0; i < ids.size(); ++i)
      out[ctx.book().homogeneous_node(static_cast<int>(t), ids[i])] = {static_cast<int>(t), o.data<int64_t>()[i]};
  }
  return out;
}

}  // namespace

int run_hetero_sample(const std::map<std::string, std::string>& flags) {
  auto ctx = initialize_from_flags(flags);
  tessera::Dataset original = tessera::read_dataset(flags.at("--data"));
  tessera::add_reverse_edges(&original);
  const auto& config = ctx->config();
  if (config.etypes.size() != original.edge_types.size())
    fail("the partitioned graph has {} edge types, the dataset with reverses {}", config.etypes.size(),
         original.edge_types.size());
  distributed::DistGraph g(*ctx);
  const auto nodes = original_nodes(*ctx, g);

  // Original edges by partitioned edge type: (src, dst) -> multiplicity, and
  // in-degree per (type, dst).
  const size_t num_etypes = config.etypes.size();
  std::vector<std::map<std::pair<int64_t, int64_t>, int64_t>> edges(num_etypes);
  std::vector<std::map<int64_t, int64_t>> in_degree(num_etypes);
  for (size_t k = 0; k < num_etypes; ++k) {
    const auto it = std::find_if(original.edge_types.begin(), original.edge_types.end(),
                                 [&](const tessera::EdgeType& e) { return e.canonical() == config.etypes[k]; });
    if (it == original.edge_types.end()) fail("edge type {} is not in the dataset", config.etypes[k]);
    for (int64_t e = 0; e < it->count(); ++e) {
      const int64_t s = it->src.data<int64_t>()[e], d = it->dst.data<int64_t>()[e];
      ++edges[k][{s, d}];
      ++in_degree[k][d];
    }
  }

  sampling::SamplerOptions options;
  options.fanouts = {kHeteroFanout};
  options.per_etype = true;
  const sampling::DistNeighborSampler sampler(*ctx, options);
  sampling::BlockBuilder builder(config.num_nodes);
  std::unique_ptr<tessera::net::Client> client = ctx->connect();
  int64_t checked = 0, remote = 0;
  for (int64_t start = ctx->rank(); start < config.num_nodes; start += 500) {
    std::vector<int64_t> seeds;
    for (int64_t v = start; v < std::min<int64_t>(config.num_nodes, start + 50); ++v) seeds.push_back(v);
    const std::vector<sampling::Block> blocks = sampler.sample_blocks(seeds, 77 + start, builder, {client.get(), 0});
    const sampling::Block& b = blocks.front();
    for (int64_t d = 0; d < b.num_dst; ++d) {
      const auto [dtype, dorig] = nodes[b.src_nodes[d]];
      remote += config.node_owner(b.src_nodes[d]) != ctx->local_part();
      std::vector<int64_t> taken(num_etypes, 0);
      for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
        const int k = b.etypes.at(e);
        const auto [stype, sorig] = nodes[b.src_nodes[b.indices[e]]];
        if (stype != config.etype_src(k) || dtype != config.etype_dst(k))
          fail("sampled edge of type {} joins node types {} -> {}", config.etypes[k], config.ntypes[stype],
               config.ntypes[dtype]);
        if (edges[k].count({sorig, dorig}) == 0)
          fail("sampled edge {} -> {} of type {} is not in the dataset", sorig, dorig, config.etypes[k]);
        ++taken[k];
        ++checked;
      }
      for (size_t k = 0; k < num_etypes; ++k) {
        if (config.etype_dst(static_cast<int>(k)) != dtype) continue;
        const auto deg = in_degree[k].find(dorig);
        const int64_t expected = std::min<int64_t>(kHeteroFanout, deg == in_degree[k].end() ? 0 : deg->second);
        if (taken[k] != expected)
          fail("node {} of type {} got {} edges of type {}, expected {}", dorig, config.ntypes[dtype], taken[k],
               config.etypes[k], expected);
      }
    }
  }
  if (checked == 0 || (!ctx->standalone() && remote == 0)) fail("the scenario sampled nothing remote to check");
  ctx->finalize();
  fmt::print("rank {}: {} heterogeneous sampled edges checked ({} seeds from another machine)\n", ctx->rank(), checked,
             remote);
  return 0;
}
