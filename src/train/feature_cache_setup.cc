#include "tessera/train/feature_cache_setup.h"

#include <cstdint>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::train {

void check_feature_cache(const FeatureCacheOptions& o) {
  if (!(o.cache_remote_features >= 0 && o.cache_remote_features <= 1))
    fail("--cache-remote-features must be a fraction in [0, 1] (got {})", o.cache_remote_features);
  if (o.feature_cache_mb < 0 || o.feature_cache_mb > (int64_t{1} << 30))
    fail("--feature-cache-mb must be 0 or more megabytes (got {})", o.feature_cache_mb);
}

distributed::RemoteRowCaches feature_caches(distributed::Context& ctx, const std::vector<store::TensorSpec>& tensors,
                                            const FeatureCacheOptions& o, run::RunLog& log) {
  // Each tensor's share of the budget: what its remote rows would take.
  std::vector<double> wanted;
  double total = 0;
  for (const store::TensorSpec& spec : tensors) {
    const IdSpace& space = ctx.book().space(spec.policy);
    const int local = ctx.local_part();
    const int64_t remote = space.size() - (local >= 0 ? space.starts[local + 1] - space.starts[local] : 0);
    wanted.push_back(static_cast<double>(remote) * static_cast<double>(spec.row_bytes()));
    total += wanted.back();
  }
  distributed::RemoteRowCaches caches;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const double share = total > 0 ? wanted[i] / total : 1.0;
    const auto budget = static_cast<int64_t>(static_cast<double>(o.feature_cache_mb << 20) * share);
    std::shared_ptr<const distributed::RemoteRowCache> cache =
        distributed::RemoteRowCache::build(ctx, tensors[i], o.cache_remote_features, budget);
    if (!cache) continue;
    log.line(fmt::format("feature cache: {} rows of other machines' nodes of {}, {:.1f} MB per trainer",
                         cache->num_rows(), tensors[i].name,
                         static_cast<double>(cache->num_rows() * tensors[i].row_bytes()) / 1e6));
    caches.push_back(std::move(cache));
  }
  return caches;
}

nlohmann::json feature_cache_summary(distributed::Context& ctx, const distributed::RemoteRowCaches& caches) {
  if (caches.empty()) return nlohmann::json::object();
  int64_t counts[3] = {0, 0, 0};
  for (const auto& cache : caches) {
    counts[0] += cache->num_rows();
    counts[1] += cache->remote_ids_found();
    counts[2] += cache->remote_ids_asked();
  }
  ctx.collectives().all_reduce_sum(counts, 3);
  return {{"feature_cache_rows", counts[0] / ctx.world_size()},
          {"feature_cache_remote_hit_rate", counts[2] == 0 ? 0.0 : static_cast<double>(counts[1]) / counts[2]}};
}

}  // namespace tessera::train
