// A trainer's caches of other machines' feature rows, from --cache-remote-features and --feature-cache-mb
// (design.md, "The remote-row cache"): the flags checked, the caches built and logged, and what they served
// summarised for the final record.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/distributed/context.h"
#include "tessera/distributed/remote_row_cache.h"
#include "tessera/run/run_log.h"
#include "tessera/store/tensor.h"
#include "tessera/train/node_train_options.h"

namespace tessera::train {

// --cache-remote-features and --feature-cache-mb, checked before a trainer
// joins its job.
void check_feature_cache(const FeatureCacheOptions& options);

// The trainer's caches of other machines' rows of `tensors` (one per
// tensor: GraphSAGE's 'feat', or each featured node type's on a
// heterogeneous graph), logged to `log`; none when there is nothing to
// cache (standalone, or a share of 0). The tensors share
// --feature-cache-mb in proportion to the bytes each would cache. Its
// loaders share them through LoaderOptions::feature_caches. The tensors are
// read-only partition data. Not collective.
distributed::RemoteRowCaches feature_caches(distributed::Context& ctx, const std::vector<store::TensorSpec>& tensors,
                                            const FeatureCacheOptions& options, run::RunLog& log);

// What the trainers' caches served, for the final record: rows per trainer
// and the share of remote rows found in a cache. Collective; {} without a
// cache (then no trainer has one).
nlohmann::json feature_cache_summary(distributed::Context& ctx, const distributed::RemoteRowCaches& caches);

}  // namespace tessera::train
