#include "tessera/sampling/edge_batch.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "distributed/graph_queries.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::sampling {
namespace {

using Mode = NegativeSampling::Mode;

// A uniform node of node type `ntype` (homogeneous ID); every node on a graph of one node type.
int64_t uniform_node(const distributed::Context& ctx, int ntype, Rng& rng) {
  if (ctx.config().ntypes.size() <= 1) return static_cast<int64_t>(rng.below(ctx.config().num_nodes));
  const IdSpace& space = ctx.book().node_space(ntype);
  return ctx.book().homogeneous_node(ntype, static_cast<int64_t>(rng.below(space.size())));
}

// Per edge, k destinations drawn uniformly from the nodes of its
// destination's type; sources (and edge types) repeat.
void per_source_negatives(const distributed::Context& ctx, const EdgeBatch& batch, int64_t k, Rng& rng,
                          EdgeBatch* out) {
  const bool typed = !batch.etypes.empty();
  out->neg_src.reserve(batch.src.size() * k);
  out->neg_dst.reserve(batch.src.size() * k);
  for (size_t i = 0; i < batch.src.size(); ++i) {
    const int etype = typed ? static_cast<int>(batch.etypes[i]) : 0;
    const int dst_type = typed ? ctx.config().etype_dst(etype) : 0;
    for (int64_t j = 0; j < k; ++j) {
      out->neg_src.push_back(batch.src[i]);
      out->neg_dst.push_back(uniform_node(ctx, dst_type, rng));
      if (typed) out->neg_etypes.push_back(etype);
    }
  }
}

// k pairs per batch edge of each type, drawn from the nodes of the type's
// ends, that are not edges of that type (nor self-loops, if asked; nor
// repeats, unless replace). Like DGL, a few rounds of draws may return fewer
// pairs on a dense graph rather than loop forever.
void global_negatives(distributed::Context& ctx, net::Client* client, int rotation, const NegativeSampling& options,
                      Rng& rng, EdgeBatch* out) {
  const bool typed = !out->etypes.empty();
  std::map<int64_t, int64_t> wanted;  // edge type -> pairs still wanted
  for (size_t i = 0; i < out->src.size(); ++i) wanted[typed ? out->etypes[i] : 0] += options.k;
  std::set<std::array<int64_t, 3>> seen;
  for (int round = 0; round < 3; ++round) {
    std::vector<int64_t> s, d, t;
    for (const auto& [etype, count] : wanted) {
      const int src_type = typed ? ctx.config().etype_src(static_cast<int>(etype)) : 0;
      const int dst_type = typed ? ctx.config().etype_dst(static_cast<int>(etype)) : 0;
      for (int64_t i = 0, draws = count * 11 / 10 + (count > 0); i < draws; ++i) {
        const int64_t u = uniform_node(ctx, src_type, rng), v = uniform_node(ctx, dst_type, rng);
        if (options.exclude_self_loops && u == v) continue;
        s.push_back(u);
        d.push_back(v);
        t.push_back(etype);
      }
    }
    if (s.empty()) break;
    const std::vector<bool> edge = distributed::has_edges(ctx, client, rotation, s.data(), d.data(),
                                                          static_cast<int64_t>(s.size()), typed ? t.data() : nullptr);
    for (size_t i = 0; i < s.size(); ++i) {
      if (edge[i] || wanted[t[i]] == 0) continue;
      if (!options.replace && !seen.insert({s[i], d[i], t[i]}).second) continue;
      out->neg_src.push_back(s[i]);
      out->neg_dst.push_back(d[i]);
      if (typed) out->neg_etypes.push_back(t[i]);
      --wanted[t[i]];
    }
  }
}

// The pairs a user's negative sampler gives for the batch's edges, checked:
// a pair of a typed graph joins nodes of its edge type's ends.
void user_negatives(const distributed::Context& ctx, const NegativeSampling& options, EdgeBatch* out) {
  options.callback(out->eids, &out->neg_src, &out->neg_dst, &out->neg_etypes);
  if (out->neg_src.size() != out->neg_dst.size())
    fail("the negative sampler gave {} sources but {} destinations", out->neg_src.size(), out->neg_dst.size());
  const int64_t n = ctx.config().num_nodes;
  for (const auto* ids : {&out->neg_src, &out->neg_dst})
    for (const int64_t v : *ids)
      if (v < 0 || v >= n) fail("the negative sampler gave node {}, outside 0..{}", v, n - 1);
  const bool typed = !out->etypes.empty();
  if (!typed) {
    if (!out->neg_etypes.empty()) fail("the negative sampler gave edge types on a graph of one edge type");
    return;
  }
  if (out->neg_etypes.size() != out->neg_src.size())
    fail("the negative sampler gave {} pairs but {} edge types", out->neg_src.size(), out->neg_etypes.size());
  const auto num_etypes = static_cast<int64_t>(ctx.config().etypes.size());
  for (size_t i = 0; i < out->neg_src.size(); ++i) {
    const int64_t etype = out->neg_etypes[i];
    if (etype < 0 || etype >= num_etypes)
      fail("the negative sampler gave edge type {}, outside 0..{}", etype, num_etypes - 1);
    const int e = static_cast<int>(etype);
    if (ctx.book().typed_node(out->neg_src[i]).ntype != ctx.config().etype_src(e) ||
        ctx.book().typed_node(out->neg_dst[i]).ntype != ctx.config().etype_dst(e))
      fail("the negative sampler gave the pair ({}, {}) as an edge of type {}, whose ends are of other node types",
           out->neg_src[i], out->neg_dst[i], etype);
  }
}

// A batch of node pairs (options.pair_src / pair_dst, indexed by the batch's
// "edge IDs"), checked, with their edge type on a typed graph.
void read_pairs(const distributed::Context& ctx, const EdgeBatchOptions& options, bool typed, EdgeBatch* batch) {
  const auto pairs = static_cast<int64_t>(options.pair_src.size());
  const auto num_etypes = static_cast<int>(ctx.config().etypes.size());
  if (options.pair_dst.size() != options.pair_src.size() || options.exclude != EdgeBatchOptions::Exclude::kNone)
    fail("a batch of node pairs needs as many sources as destinations, and no exclusion");
  if (typed && (options.pair_etype < 0 || options.pair_etype >= num_etypes))
    fail("node pairs of a typed graph need their edge type, one of 0..{} (got {})", num_etypes - 1,
         options.pair_etype);
  for (size_t i = 0; i < batch->eids.size(); ++i) {
    const int64_t p = batch->eids[i];
    if (p < 0 || p >= pairs) fail("pair {} is outside 0..{}", p, pairs - 1);
    batch->src[i] = options.pair_src[p];
    batch->dst[i] = options.pair_dst[p];
    if (!typed) continue;
    if (ctx.book().typed_node(batch->src[i]).ntype != ctx.config().etype_src(options.pair_etype) ||
        ctx.book().typed_node(batch->dst[i]).ntype != ctx.config().etype_dst(options.pair_etype))
      fail("pair {} ({}, {}) does not join the node types of edge type {}", p, batch->src[i], batch->dst[i],
           ctx.config().etypes[options.pair_etype]);
    batch->etypes.push_back(options.pair_etype);
  }
}

// Replaces node IDs by their positions in `seeds` (sorted, holding them all).
void to_positions(const std::vector<int64_t>& seeds, std::vector<int64_t>* ids) {
  for (int64_t& id : *ids) id = std::lower_bound(seeds.begin(), seeds.end(), id) - seeds.begin();
}

}  // namespace

void plan_edge_batch(distributed::Context& ctx, net::Client* client, int rotation, const EdgeBatchOptions& options,
                     std::vector<int64_t> eids, uint64_t key, EdgeBatch* batch, std::vector<int64_t>* seeds,
                     EdgeExclusion* exclude) {
  const int64_t n = static_cast<int64_t>(eids.size());
  batch->eids = std::move(eids);
  batch->src.assign(n, 0);
  batch->dst.assign(n, 0);
  batch->neg_src.clear();
  batch->neg_dst.clear();
  batch->etypes.clear();
  batch->neg_etypes.clear();
  const bool typed = ctx.config().ntypes.size() > 1 || ctx.config().etypes.size() > 1;
  if (!options.pair_src.empty() || !options.pair_dst.empty()) {
    read_pairs(ctx, options, typed, batch);
  } else {
    distributed::find_edges(ctx, client, rotation, batch->eids.data(), n, batch->src.data(), batch->dst.data());
    if (typed)
      for (const int64_t e : batch->eids) batch->etypes.push_back(ctx.book().typed_edge(e).etype);
  }
  exclude->eids.clear();
  exclude->ends.clear();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t etype = batch->etypes.empty() ? 0 : batch->etypes[i];
    if (options.exclude == EdgeBatchOptions::Exclude::kSelfAndReverse) {
      exclude->ends.push_back({batch->src[i], batch->dst[i], etype});
      exclude->ends.push_back({batch->dst[i], batch->src[i], etype});
    }
    if (options.exclude == EdgeBatchOptions::Exclude::kReverseTypes) {
      const auto it = options.reverse_etypes.find(static_cast<int>(etype));
      if (it != options.reverse_etypes.end()) exclude->ends.push_back({batch->dst[i], batch->src[i], it->second});
    }
  }

  Rng rng(key, 0x6e6567);  // "neg"
  const NegativeSampling& neg = options.negatives;
  if (neg.mode == Mode::kPerSource) per_source_negatives(ctx, *batch, neg.k, rng, batch);
  if (neg.mode == Mode::kGlobal) global_negatives(ctx, client, rotation, neg, rng, batch);
  if (neg.mode == Mode::kCallback) user_negatives(ctx, neg, batch);

  seeds->clear();
  for (const auto* ids : {&batch->src, &batch->dst, &batch->neg_src, &batch->neg_dst})
    seeds->insert(seeds->end(), ids->begin(), ids->end());
  std::sort(seeds->begin(), seeds->end());
  seeds->erase(std::unique(seeds->begin(), seeds->end()), seeds->end());
  for (auto* ids : {&batch->src, &batch->dst, &batch->neg_src, &batch->neg_dst}) to_positions(*seeds, ids);

  switch (options.exclude) {
    case EdgeBatchOptions::Exclude::kNone:
    case EdgeBatchOptions::Exclude::kSelfAndReverse:  // its ends are set above, from node IDs
      break;
    case EdgeBatchOptions::Exclude::kSelf:
    case EdgeBatchOptions::Exclude::kReverseTypes:  // and the reverses' ends, set above
      exclude->eids = batch->eids;
      break;
    case EdgeBatchOptions::Exclude::kReverseId: {
      exclude->eids = batch->eids;
      const auto count = static_cast<int64_t>(options.reverse_eids.size());
      for (const int64_t e : batch->eids) {
        if (e >= count) fail("reverse_eids has {} entries, so edge {} has no reverse", count, e);
        exclude->eids.push_back(options.reverse_eids[e]);
      }
      break;
    }
    case EdgeBatchOptions::Exclude::kCallback:
      exclude->eids = options.exclude_callback(batch->eids);
      break;
  }
  exclude->seal();
}

}  // namespace tessera::sampling
