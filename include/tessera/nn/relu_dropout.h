// ReLU then dropout, in one pass forward and one backward: what GraphSAGE, GCN and R-GCN do between layers; and
// elementwise_dropout alone (a layer's feat_drop), from the same generator.
//
// libtorch's dropout draws one 64-bit random number per element (bernoulli_) and keeps a mask; on a sampled
// block's hidden layer (~5,000 x 16) that cost as much as the layer's GEMMs. Here each 64-bit draw of a
// counter-based generator decides four elements, and no mask is kept: the output is positive exactly where the
// input was positive and kept, so the backward reads the output; dropout alone draws the forward's draws again.
//
// A public header whose API is libtorch's. The random stream is seeded by one draw from libtorch's default CPU
// generator per call, so torch::manual_seed makes runs repeatable, and results do not depend on the thread
// count. The keep probability is rounded to a multiple of 2^-16. Errors are tessera::Error.
#pragma once

#include <torch/types.h>

namespace tessera::nn {

// relu(x) with each element zeroed with probability p and the rest scaled
// by 1 / (1 - p) when training; relu(x) alone otherwise (or when p == 0).
// x: float32 on the CPU, any shape; p in [0, 1). Differentiable in x.
torch::Tensor relu_dropout(const torch::Tensor& x, double p, bool training);

// x with each element zeroed with probability p and the rest scaled by
// 1 / (1 - p) when training; x itself otherwise (or when p == 0). The same
// contract on x and p. Differentiable in x.
torch::Tensor elementwise_dropout(const torch::Tensor& x, double p, bool training);

}  // namespace tessera::nn
