// One SAGEConv layer (DGL's "mean" or "gcn" aggregator) as a single autograd node, forward and backward written
// by hand over the block's CSR arrays and the BLAS:
//
//   out = x_src[:num_dst] @ w_self^T + reduce(x_src over the block) @ w_neigh^T + bias
//
// With libtorch's ops the same layer is ~8 nodes (two linears, the aggregation, a narrow, two adds), each with its
// dispatch, temporaries and an extra pass over its output; here the GEMMs accumulate into one output and the
// backward computes only the gradients asked for. fc_neigh and the aggregation commute, so linear_first picks the
// order (see linear_first_is_cheaper in sage.h): projecting first aggregates out-wide rows of all sources;
// aggregating first runs the GEMM on the destinations only.
//
// A public header whose API is libtorch's. The result and gradients equal autograd over the unfused ops up to
// float rounding (the sums run in another order). The autograd graph keeps indptr and indices (and any memory they
// view) until its backward has run or it is freed. Malformed input throws tessera::Error naming the problem.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>

#include "tessera/nn/csr_aggregate.h"

namespace tessera::nn {

// x_src: float32 [num_src, in] on the CPU; indptr / indices: the block's CSR
// by destination (as csr_aggregate); num_dst <= num_src, destination d being
// source d. w_self: [out, in], or undefined (the "gcn" aggregator has no
// fc_self); w_neigh: [out, in]; bias: [out] or undefined. reduce: kMean or
// kGcnMean (or kSum). Returns float32 [num_dst, out], differentiable in
// x_src, w_self, w_neigh and bias.
torch::Tensor fused_sage_conv(const torch::Tensor& x_src, const torch::Tensor& indptr, const torch::Tensor& indices,
                              int64_t num_dst, const torch::Tensor& w_self, const torch::Tensor& w_neigh,
                              const torch::Tensor& bias, CsrReduce reduce, bool linear_first);

// relu_dropout(·, p, training) applied by the layer to its own output.
struct ReluDropout {
  double p = 0;
  bool training = false;
};

// The same layer when the aggregation is already done (a loader's
// aggregate_inputs): out = x_dst @ w_self^T + aggregated @ w_neigh^T + bias,
// with x_dst [num_dst, in] (undefined with w_self, for "gcn") and aggregated
// [num_dst, in]. Differentiable in all of them. With `then`, returns
// relu_dropout(out, then->p, then->training), equal to the separate call's
// bits (the same generator draw), in the layer's own node: no second output
// buffer, node or pass over the gradient (the bias's sums come with it).
torch::Tensor fused_sage_conv_aggregated(const torch::Tensor& x_dst, const torch::Tensor& aggregated,
                                         const torch::Tensor& w_self, const torch::Tensor& w_neigh,
                                         const torch::Tensor& bias,
                                         const std::optional<ReluDropout>& then = std::nullopt);

}  // namespace tessera::nn
