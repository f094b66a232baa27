// Node classification's evaluation: the share of nodes whose largest logit is at their label, over all trainers.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"

namespace tessera::train {

// Accuracy of `logits` over `ids` (this trainer's share, in unshuffled
// batches of `options`), summed over all trainers (collective); -1 when no
// trainer has one. `model` is in eval() mode and gradients are off
// meanwhile; the model is back in train() mode after.
double accuracy(distributed::Context& ctx, torch::nn::Module& model, const sampling::DistNeighborSampler& sampler,
                const std::vector<int64_t>& ids, sampling::LoaderOptions options,
                const std::function<torch::Tensor(const sampling::MiniBatch&)>& logits);

}  // namespace tessera::train
