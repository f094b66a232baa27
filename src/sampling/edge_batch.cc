#include "tessera/sampling/edge_batch.h"

#include <algorithm>
#include <set>
#include <utility>

#include "distributed/graph_queries.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::sampling {
namespace {

using Mode = NegativeSampling::Mode;

// Per edge, k destinations drawn uniformly from the nodes; sources repeat.
void per_source_negatives(const EdgeBatch& batch, int64_t k, int64_t num_nodes, Rng& rng, EdgeBatch* out) {
  out->neg_src.reserve(batch.src.size() * k);
  out->neg_dst.reserve(batch.src.size() * k);
  for (const int64_t s : batch.src)
    for (int64_t j = 0; j < k; ++j) {
      out->neg_src.push_back(s);
      out->neg_dst.push_back(static_cast<int64_t>(rng.below(num_nodes)));
    }
}

// k * batch pairs from all nodes that are not edges (nor self-loops, if
// asked; nor repeats, unless replace). Like DGL, a few rounds of draws may
// return fewer pairs on a dense graph rather than loop forever.
void global_negatives(distributed::Context& ctx, net::Client* client, int rotation, const NegativeSampling& options,
                      int64_t wanted, Rng& rng, EdgeBatch* out) {
  const int64_t num_nodes = ctx.config().num_nodes;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int round = 0; round < 3 && static_cast<int64_t>(out->neg_src.size()) < wanted; ++round) {
    const int64_t draws = (wanted - static_cast<int64_t>(out->neg_src.size())) * 11 / 10 + 1;
    std::vector<int64_t> s, d;
    for (int64_t i = 0; i < draws; ++i) {
      const int64_t u = static_cast<int64_t>(rng.below(num_nodes)), v = static_cast<int64_t>(rng.below(num_nodes));
      if (options.exclude_self_loops && u == v) continue;
      s.push_back(u);
      d.push_back(v);
    }
    const std::vector<bool> edge = distributed::has_edges(ctx, client, rotation, s.data(), d.data(),
                                                          static_cast<int64_t>(s.size()));
    for (size_t i = 0; i < s.size() && static_cast<int64_t>(out->neg_src.size()) < wanted; ++i) {
      if (edge[i]) continue;
      if (!options.replace && !seen.insert({s[i], d[i]}).second) continue;
      out->neg_src.push_back(s[i]);
      out->neg_dst.push_back(d[i]);
    }
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
  distributed::find_edges(ctx, client, rotation, batch->eids.data(), n, batch->src.data(), batch->dst.data());
  exclude->eids.clear();
  exclude->ends.clear();
  if (options.exclude == EdgeBatchOptions::Exclude::kSelfAndReverse)
    for (int64_t i = 0; i < n; ++i) {
      exclude->ends.push_back({batch->src[i], batch->dst[i], 0});
      exclude->ends.push_back({batch->dst[i], batch->src[i], 0});
    }

  Rng rng(key, 0x6e6567);  // "neg"
  const NegativeSampling& neg = options.negatives;
  if (neg.mode == Mode::kPerSource) per_source_negatives(*batch, neg.k, ctx.config().num_nodes, rng, batch);
  if (neg.mode == Mode::kGlobal) global_negatives(ctx, client, rotation, neg, n * neg.k, rng, batch);

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
