#include "tessera/sampling/dist_sampler.h"

#include <utility>

#include "net/transport.h"
#include "sampling/sample_service.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/distributed/dist_tensor.h"

namespace tessera::sampling {
namespace {

using net::Header;

uint64_t layer_key(uint64_t key, int layer) { return splitmix64(key + 0x9e3779b97f4a7c15ULL * (layer + 1)); }

}  // namespace

DistNeighborSampler::DistNeighborSampler(distributed::Context& ctx, SamplerOptions options)
    : ctx_(&ctx), options_(std::move(options)) {
  // A client machine (server-client mode) holds no partition: every seed is
  // sampled by its owner's servers.
  if (ctx.has_local_part()) local_ = csc_view(ctx.local());
  if (options_.fanouts.empty()) fail("sampling needs at least one layer's fanout");
  for (const int64_t f : options_.fanouts)
    if (f < -1) fail("fanout {}: a fanout is a count >= 0 or -1 (every in-edge)", f);
  if (!options_.weights.empty() && ctx.has_local_part()) {
    const auto tensor_of = [&ctx](const std::string& name) { return ctx.local_tensor(name); };
    local_weight_rows_ =
        use_edge_weights(tensor_of, ctx.config(), ctx.book(), ctx.local_part(), options_.weights, &local_weights_);
  } else if (!options_.weights.empty()) {
    // No partition here: check the weights by their published specs now, not
    // at the first batch's reply from a server.
    check_edge_weights(options_.weights, ctx.config(), ctx.book(), [&ctx](const std::string& name, int) {
      return distributed::DistTensor::open(ctx, name).spec();
    });
  }
}

DistNeighborSampler DistNeighborSampler::with_fanouts(std::vector<int64_t> fanouts) const {
  SamplerOptions options = options_;
  options.fanouts = std::move(fanouts);
  return DistNeighborSampler(*ctx_, options);
}

void DistNeighborSampler::sample_layer(const std::vector<int64_t>& seeds, FanoutSpec spec, const Channel& channel,
                                       SampledEdges* out) const {
  out->clear();
  const int64_t n = static_cast<int64_t>(seeds.size());
  const int parts = ctx_->num_parts();
  const int local = ctx_->local_part();
  spec.weights = local_weights_.weights;

  // Owner of every seed; the common case (all local) needs no regrouping.
  std::vector<int32_t> owner(n);
  bool all_local = local >= 0;
  for (int64_t i = 0; i < n; ++i) {
    const int p = ctx_->config().node_owner(seeds[i]);
    if (p < 0) fail("sampling: seed {} is not a node (the graph has {})", seeds[i], ctx_->config().num_nodes);
    owner[i] = p;
    all_local &= p == local;
  }
  if (all_local) {
    sample_in_edges(local_, seeds.data(), n, spec, out);
    return;
  }
  if (channel.client == nullptr) fail("internal: remote seeds to sample but no connection to the servers");

  std::vector<std::vector<int64_t>> group(parts);
  for (int64_t i = 0; i < n; ++i) group[owner[i]].push_back(seeds[i]);
  std::vector<uint64_t> requests(parts, 0);
  for (int p = 0; p < parts; ++p) {
    if (p == local || group[p].empty()) continue;
    Header h = net::make_header(kSample, 0, "");
    net::set_shape(&h, DType::kInt64, {static_cast<int64_t>(group[p].size())});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::vector<int64_t>(group[p])));
    frames.push_back(net::frame_of(encode_fanout(spec)));
    if (!options_.weights.empty()) {
      const std::string names = encode_weight_names(options_.weights);
      frames.emplace_back(names.data(), names.size());
    }
    requests[p] = channel.client->send(ctx_->server_for(p, channel.rotation), h, std::move(frames));
  }

  // Per partition: the counts, sources, edge IDs and types of its group, in order.
  struct Part {
    const int64_t *counts = nullptr, *src = nullptr, *eids = nullptr;
    const int32_t* etypes = nullptr;
    size_t next_seed = 0, next_edge = 0;
  };
  const bool typed = ctx_->config().etypes.size() > 1;  // as partitions store edge types
  std::vector<Part> results(parts);
  SampledEdges local_edges;
  if (local >= 0 && !group[local].empty()) {
    sample_in_edges(local_, group[local].data(), static_cast<int64_t>(group[local].size()), spec, &local_edges);
    results[local] = {local_edges.counts.data(), local_edges.src.data(), local_edges.eids.data(),
                      local_edges.etypes.data()};
  }
  std::vector<net::Reply> replies(parts);
  for (int p = 0; p < parts; ++p) {
    if (requests[p] == 0) continue;
    replies[p] = std::move(channel.client->wait({requests[p]})[0]);
    const auto& frames = replies[p].frames;
    const size_t seeds_in_group = group[p].size();
    if (frames.size() != (typed ? 4u : 3u) || frames[0].size() != seeds_in_group * sizeof(int64_t) ||
        frames[1].size() != frames[2].size() || (typed && frames[3].size() * 2 != frames[1].size()))
      fail("sampling: partition {}'s reply is malformed", p);
    results[p] = {frames[0].data<int64_t>(), frames[1].data<int64_t>(), frames[2].data<int64_t>(),
                  typed ? frames[3].data<int32_t>() : nullptr};
    int64_t total = 0;
    for (size_t i = 0; i < seeds_in_group; ++i) total += results[p].counts[i];
    if (total * sizeof(int64_t) != frames[1].size()) fail("sampling: partition {}'s reply counts do not add up", p);
  }

  // Merge in seed order.
  out->counts.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    Part& r = results[owner[i]];
    const int64_t c = r.counts[r.next_seed++];
    out->counts[i] = c;
    out->src.insert(out->src.end(), r.src + r.next_edge, r.src + r.next_edge + c);
    out->eids.insert(out->eids.end(), r.eids + r.next_edge, r.eids + r.next_edge + c);
    if (typed) out->etypes.insert(out->etypes.end(), r.etypes + r.next_edge, r.etypes + r.next_edge + c);
    r.next_edge += c;
  }
  const int64_t num_nodes = ctx_->config().num_nodes;
  for (const int64_t s : out->src)
    if (s < 0 || s >= num_nodes) fail("sampling: a server returned source node {} (the graph has {})", s, num_nodes);
}

std::vector<Block> DistNeighborSampler::sample_blocks(const std::vector<int64_t>& seeds, uint64_t key,
                                                      BlockBuilder& builder, const Channel& channel,
                                                      const EdgeExclusion* exclude) const {
  const int layers = num_layers();
  std::vector<Block> blocks(layers);
  const std::vector<int64_t>* dst = &seeds;
  for (int layer = layers - 1; layer >= 0; --layer) {
    SampledEdges edges;
    FanoutSpec spec;
    spec.fanout = options_.fanouts[layer];
    spec.replace = options_.replace;
    spec.key = layer_key(key, layer);
    if (options_.per_etype) spec.etype_fanouts.assign(ctx_->config().etypes.size(), options_.fanouts[layer]);
    sample_layer(*dst, spec, channel, &edges);
    if (exclude != nullptr) remove_excluded(dst->data(), *exclude, &edges);
    Block& block = blocks[layer] = builder.build(*dst, std::move(edges));
    if (ctx_->config().ntypes.size() > 1) {
      block.src_ntypes.resize(block.src_nodes.size());
      for (size_t i = 0; i < block.src_nodes.size(); ++i)
        block.src_ntypes[i] = ctx_->book().typed_node(block.src_nodes[i]).ntype;
    }
    dst = &block.src_nodes;
  }
  return blocks;
}

}  // namespace tessera::sampling
