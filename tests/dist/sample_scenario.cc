// `dist_worker sample`: samples a fixed set of seeds many times through the
// distributed sampler (or standalone), checks every sampled edge against the
// original dataset, and writes how often each original edge was drawn, so
// the test can compare the distributions of standalone and distributed
// sampling. Also draws a few mini-batches through the data loader and checks
// the blocks and the fetched feature rows, then again through a cache of
// remote feature rows (distributed only), which it checks too; and with the
// input rows aggregated on the sampler threads (aggregate_inputs, and
// set_input_aggregation with every source row kept), against means of the
// dataset's rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "scenarios.h"
#include "net/transport.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/remote_row_cache.h"
#include "tessera/io/dataset_io.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/base/error.h"

namespace distributed = tessera::distributed;
namespace sampling = tessera::sampling;
using tessera::Array;
using tessera::fail;

namespace {

constexpr int64_t kSeeds = 300;  // original node IDs 0..kSeeds-1
constexpr int kTrials = 400;
constexpr int64_t kFanout = 3;

struct Originals {
  std::vector<int64_t> node, edge;  // new ID -> original ID
  std::vector<int64_t> new_node;    // original ID -> new ID
};

Originals originals(distributed::DistGraph& g) {
  Originals o;
  std::vector<int64_t> nodes(g.num_nodes()), edges(g.num_edges());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int64_t>(i);
  for (size_t i = 0; i < edges.size(); ++i) edges[i] = static_cast<int64_t>(i);
  const Array n = g.ndata("_ORIG_ID").pull(nodes), e = g.edata("_ORIG_ID").pull(edges);
  o.node.assign(n.data<int64_t>(), n.data<int64_t>() + nodes.size());
  o.edge.assign(e.data<int64_t>(), e.data<int64_t>() + edges.size());
  o.new_node.assign(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) o.new_node[o.node[i]] = static_cast<int64_t>(i);
  return o;
}

// batch.aggregated against the mean (or gcn mean) of the dataset's rows
// of each destination's sampled sources, in double.
void check_aggregated(const sampling::MiniBatch& batch, const Array& feat, const Originals& o,
                      tessera::nn::CsrReduce reduce) {
  const sampling::Block& b = batch.blocks.front();
  const int64_t f = feat.row_bytes() / sizeof(float);
  const bool gcn = reduce == tessera::nn::CsrReduce::kGcnMean;
  if (batch.aggregated.empty_handle() || batch.aggregated.rows() != b.num_dst)
    fail("batch {}: no aggregated row per destination", batch.index);
  const float* rows = feat.data<float>();
  const float* got = batch.aggregated.data<float>();
  for (int64_t d = 0; d < b.num_dst; ++d) {
    const int64_t deg = b.indptr[d + 1] - b.indptr[d];
    for (int64_t j = 0; j < f; ++j) {
      double sum = gcn ? rows[o.node[b.src_nodes[d]] * f + j] : 0.0;
      for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) sum += rows[o.node[b.src_nodes[b.indices[e]]] * f + j];
      const double want = gcn ? sum / static_cast<double>(deg + 1) : deg > 0 ? sum / static_cast<double>(deg) : 0.0;
      if (std::abs(got[d * f + j] - want) > 1e-5 * std::max(1.0, std::abs(want)))
        fail("batch {}: aggregated row {} element {} is {}, expected {}", batch.index, d, j, got[d * f + j], want);
    }
  }
}

// Every edge of every block is an edge of the original graph into its
// destination, and the feature rows are the sources' rows.
void check_batches(distributed::Context& ctx, const sampling::DistNeighborSampler& sampler, const Originals& o,
                   const tessera::Dataset& original, int samplers,
                   std::shared_ptr<const distributed::RemoteRowCache> cache = nullptr,
                   std::optional<tessera::nn::CsrReduce> aggregate = std::nullopt, bool keep_sources = false) {
  const auto& et = original.edge_types.at(0);
  const Array& feat = original.node_types.at(0).data.at("feat");
  std::vector<int64_t> seeds;
  for (int64_t i = ctx.rank(); i < static_cast<int64_t>(o.node.size()); i += ctx.world_size()) seeds.push_back(i);
  sampling::LoaderOptions options;
  options.batch_size = 32;
  options.num_samplers = samplers;
  options.seed = 5;
  if (cache) options.feature_caches = {std::move(cache)};
  if (!keep_sources) options.aggregate_inputs = aggregate;
  sampling::DistDataLoader loader(ctx, sampler, seeds, options);
  if (keep_sources) loader.set_input_aggregation(aggregate);  // as the Python SAGEConv asks for it
  loader.limit_batches(20);
  loader.start_epoch(0);
  sampling::MiniBatch batch;
  int64_t batches = 0;
  while (loader.next(&batch)) {
    if (batch.index != batches) fail("batch {} arrived as number {}", batch.index, batches);
    ++batches;
    for (const sampling::Block& b : batch.blocks) {
      for (int64_t d = 0; d < b.num_dst; ++d)
        for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) {
          const int64_t oe = o.edge[b.eids[e]];
          const int64_t os = o.node[b.src_nodes[b.indices[e]]], od = o.node[b.src_nodes[d]];
          if (et.src.data<int64_t>()[oe] != os || et.dst.data<int64_t>()[oe] != od)
            fail("block edge {} -> {} (original {} -> {}) is not original edge {}", b.src_nodes[b.indices[e]],
                 b.src_nodes[d], os, od, oe);
        }
    }
    const auto& inputs = batch.blocks.front().src_nodes;
    const size_t rb = feat.row_bytes();
    // Aggregated inputs: features hold the destinations' rows (none for gcn), or every source's when kept.
    const size_t rows = !aggregate || keep_sources ? inputs.size()
                        : *aggregate == tessera::nn::CsrReduce::kGcnMean ? 0
                                                                          : batch.blocks[0].num_dst;
    if (rows != (batch.features.empty_handle() ? 0 : static_cast<size_t>(batch.features.rows())))
      fail("batch {}: {} feature rows, expected {}", batch.index, batch.features.rows(), rows);
    for (size_t i = 0; i < rows; ++i)
      if (std::memcmp(static_cast<const char*>(batch.features.raw()) + i * rb,
                      static_cast<const char*>(feat.raw()) + o.node[inputs[i]] * rb, rb) != 0)
        fail("batch {}: feature row of node {} differs from the dataset", batch.index, inputs[i]);
    if (aggregate) check_aggregated(batch, feat, o, *aggregate);
  }
  if (batches != 20) fail("the loader gave {} batches, expected 20", batches);
  if (!options.feature_caches.empty() || aggregate) return;
  fmt::print("rank {}: {} loader batches with {} samplers match the dataset\n", ctx.rank(), batches, samplers);
}

// A cache of 30% of the other partition's nodes holds exactly the ones of
// largest in-degree there, none of this machine's, and the loader's rows
// through it (some from the cache) still match the dataset.
void check_cache(distributed::Context& ctx, distributed::DistGraph& g, const sampling::DistNeighborSampler& sampler,
                 const Originals& o, const tessera::Dataset& original) {
  const distributed::DistTensor feat = g.ndata("feat");
  const auto cache = distributed::RemoteRowCache::build(ctx, feat.spec(), 0.3, int64_t{1} << 30);
  const tessera::IdSpace& space = ctx.book().space(feat.spec().policy);
  int64_t expected_rows = 0;
  for (int p = 0; p < ctx.num_parts(); ++p) {
    if (p == ctx.local_part()) continue;
    std::vector<int64_t> nodes;
    for (int64_t id = space.starts[p]; id < space.starts[p + 1]; ++id) nodes.push_back(id);
    const std::vector<int64_t> degrees = g.in_degrees(nodes);
    int64_t min_in = INT64_MAX, max_out = -1, in = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (cache->contains(nodes[i])) {
        min_in = std::min(min_in, degrees[i]);
        ++in;
      } else {
        max_out = std::max(max_out, degrees[i]);
      }
    }
    const int64_t want = std::llround(0.3 * static_cast<double>(nodes.size()));
    if (in != want) fail("the cache holds {} of partition {}'s {} nodes, expected {}", in, p, nodes.size(), want);
    if (max_out > min_in)
      fail("partition {}: a node of in-degree {} is not cached while one of {} is", p, max_out, min_in);
    expected_rows += want;
  }
  if (cache->num_rows() != expected_rows) fail("the cache has {} rows, expected {}", cache->num_rows(), expected_rows);
  for (int64_t id = space.starts[ctx.local_part()]; id < space.starts[ctx.local_part() + 1]; ++id)
    if (cache->contains(id)) fail("the cache holds local node {}", id);
  // A budget of 10 rows wins over the fraction.
  const auto small = distributed::RemoteRowCache::build(ctx, feat.spec(), 0.3, 10 * feat.spec().row_bytes());
  if (small->num_rows() > 10 || small->num_rows() < 9) fail("a 10-row budget cached {} rows", small->num_rows());
  check_batches(ctx, sampler, o, original, 2, cache);
  check_batches(ctx, sampler, o, original, 1, cache, tessera::nn::CsrReduce::kGcnMean);
  if (cache->remote_ids_found() == 0) fail("no input row came from the cache");
  fmt::print("rank {}: a cache of {} remote rows served {} of {} remote input rows, all matching the dataset\n", ctx.rank(),
             cache->num_rows(), cache->remote_ids_found(), cache->remote_ids_asked());
}

}  // namespace

int run_sample(const std::map<std::string, std::string>& flags) {
  auto ctx = initialize_from_flags(flags);
  const tessera::Dataset original = tessera::read_dataset(flags.at("--data"));
  distributed::DistGraph g(*ctx);
  const Originals o = originals(g);
  const auto& et = original.edge_types.at(0);

  sampling::SamplerOptions options;
  options.fanouts = {kFanout};
  const sampling::DistNeighborSampler sampler(*ctx, options);
  const int samplers = flags.count("--samplers") ? std::stoi(flags.at("--samplers")) : 2;
  check_batches(*ctx, sampler, o, original, samplers);
  check_batches(*ctx, sampler, o, original, samplers, nullptr, tessera::nn::CsrReduce::kMean);
  check_batches(*ctx, sampler, o, original, samplers, nullptr, tessera::nn::CsrReduce::kMean, /*keep_sources=*/true);
  check_batches(*ctx, sampler, o, original, samplers, nullptr, tessera::nn::CsrReduce::kGcnMean, /*keep_sources=*/true);
  {
    sampling::LoaderOptions nothing;  // fetches no rows: nothing to aggregate
    nothing.feature = nothing.label = "";
    sampling::DistDataLoader loader(*ctx, sampler, {0}, nothing);
    bool refused = false;
    try {
      loader.set_input_aggregation(tessera::nn::CsrReduce::kMean);
    } catch (const tessera::Error&) {
      refused = true;
    }
    if (!refused) fail("set_input_aggregation on a loader that fetches no feature was not refused");
  }
  fmt::print("rank {}: aggregated loader inputs match the dataset's means\n", ctx->rank());
  if (!ctx->standalone()) check_cache(*ctx, g, sampler, o, original);

  if (ctx->rank() == 0) {
    std::vector<int64_t> seeds;
    for (int64_t i = 0; i < kSeeds; ++i) seeds.push_back(o.new_node[i]);
    std::unique_ptr<tessera::net::Client> client = ctx->connect();
    const sampling::Channel channel{client.get(), 0};
    std::map<int64_t, int64_t> drawn;  // original edge -> times drawn
    sampling::SampledEdges edges;
    for (int trial = 0; trial < kTrials; ++trial) {
      sampling::FanoutSpec spec;
      spec.fanout = kFanout;
      spec.key = 1000 + trial;
      sampler.sample_layer(seeds, spec, channel, &edges);
      size_t e = 0;
      for (int64_t i = 0; i < kSeeds; ++i)
        for (int64_t k = 0; k < edges.counts[i]; ++k, ++e) {
          const int64_t oe = o.edge[edges.eids[e]];
          if (et.dst.data<int64_t>()[oe] != i || et.src.data<int64_t>()[oe] != o.node[edges.src[e]])
            fail("sampled edge {} of seed {} is not an in-edge of original node {}", edges.eids[e], seeds[i], i);
          ++drawn[oe];
        }
    }
    const std::string mode = ctx->standalone() ? "standalone" : "distributed";
    std::ofstream out(fmt::format("{}/drawn-{}.txt", flags.at("--out"), mode));
    for (const auto& [edge, times] : drawn) out << edge << " " << et.dst.data<int64_t>()[edge] << " " << times << "\n";
    fmt::print("rank 0: {} trials of {} seeds sampled, every edge checked\n", kTrials, kSeeds);
  }
  ctx->finalize();
  fmt::print("rank {}: sampling checks passed\n", ctx->rank());
  return 0;
}
