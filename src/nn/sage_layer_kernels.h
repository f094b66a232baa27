// The arithmetic of one GraphSAGE layer on raw buffers, forward and back: the bodies of fused_sage_conv's autograd
// nodes (tessera/nn/fused_sage_conv.h) and of the hand-written training step (tessera/nn/sage_step.h), so that both
// give the same bits. The caller owns every buffer: nothing here allocates but the GEMMs' packing. No checks either:
// callers check shapes, and blocks with csr_kernels.h's check_block, first.
#pragma once

#include <cstdint>

#include "tessera/nn/csr_reduce.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::nn::detail {

// A layer's parameters: w_self and w_neigh [out x in] (w_self null for
// "gcn"), bias [out] or null.
struct SageWeights {
  const float* w_self = nullptr;
  const float* w_neigh = nullptr;
  const float* bias = nullptr;
};

// Where a backward writes the gradients it is asked for; null: not asked.
// Inputs' gradients have their input's shape, weights' [out x in].
struct SageGradients {
  float* dx = nullptr;  // the block's sources, or aggregated's rows
  float* dx_dst = nullptr;  // the destinations' own rows (aggregated layer only)
  float* dw_self = nullptr;
  float* dw_neigh = nullptr;
  float* db = nullptr;
};

// A layer on a block: y = x[:num_dst] w_self^T + reduce(x over the block)
// w_neigh^T + bias, for num_src source rows x of `in` floats.
struct SageBlock {
  const int64_t* indptr = nullptr;
  const int64_t* indices = nullptr;
  int64_t num_src = 0, num_dst = 0, in = 0, out = 0;
  CsrReduce reduce = CsrReduce::kMean;
  bool linear_first = false;  // fc_neigh before the aggregation (sage.h's linear_first_is_cheaper)

  // Floats of scratch the forward needs: the projection (num_src x out)
  // when linear_first, else the aggregation (num_dst x in), which the
  // backward reads again: keep it until then.
  int64_t forward_scratch() const { return linear_first ? num_src * out : num_dst * in; }
  // Floats of scratch the backward needs: A^T g (num_src x out) or g w_neigh
  // (num_dst x in).
  int64_t backward_scratch() const { return linear_first ? num_src * out : num_dst * in; }
};

// y [num_dst x out], every element written.
void sage_block_forward(const SageBlock& b, const SageWeights& w, const float* x, float* scratch, float* y);

// From g = dL/dy [num_dst x out]: the gradients asked for in `grads`
// (dx_dst unused). forward_scratch: what the forward left in its scratch.
void sage_block_backward(const SageBlock& b, const SageWeights& w, const float* x, const float* forward_scratch,
                         const float* g, float* scratch, const SageGradients& grads);

// The layer on rows aggregated beforehand, n destinations: y = x_dst
// w_self^T + aggregated w_neigh^T + bias [n x out] (x_dst unused without
// w_self), then, with `then`, relu and dropout in place from its draw.
void sage_aggregated_forward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                             const SageWeights& w, const DropoutDraw* then, float* y);

// From g = dL/dy: with activated_out (the forward's output when it ran
// `then`; scale the draw's), back through relu and dropout first into
// g_scratch (n x out floats). dx is aggregated's gradient.
void sage_aggregated_backward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                              const SageWeights& w, const float* g, const float* activated_out, float scale,
                              float* g_scratch, const SageGradients& grads);

}  // namespace tessera::nn::detail
