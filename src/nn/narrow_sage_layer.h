// GraphSAGE's layer on aggregated rows (sage_layer_kernels.h's sage_aggregated_*) in one pass each way, where the
// build has the narrow kernels (narrow_gemm.h) and the layer is at most kOnePassMax wide (one register a row, as the hidden
// layer at the bench's widths). The forward reads a row of x_dst and of aggregated, keeps both products in
// registers and writes the output row once, its bias, ReLU and dropout applied; the weights' backward unmasks a
// row of the gradient in registers and adds its outer products with both inputs and its bias sums. Separately
// these were two GEMMs, a bias pass and an activation pass over the output, then an unmasking pass and two GEMMs
// reading the gradient again. The same bits as those passes (each sum in the same order).
#pragma once

#include <cstdint>

#include "nn/relu_dropout_kernels.h"
#include "nn/sage_layer_kernels.h"

namespace tessera::nn::detail {

// The widest layer the one-pass kernels take: one AVX-512 register a row.
constexpr int64_t kOnePassMax = 16;

// sage_aggregated_forward's contract. Returns false, having touched
// nothing, where the build or the shape is not the kernel's.
bool narrow_sage_forward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                         const SageWeights& w, const DropoutDraw* then, float* y);

// sage_aggregated_backward's contract for the weights' gradients alone
// (grads.dx and grads.dx_dst null): dw_neigh, and dw_self / db when not
// null. Returns false, having touched nothing, where the build or the
// shape is not the kernel's, or where the GEMM it replaces would split its
// rows over threads (its sums would be added in another order).
bool narrow_sage_weight_gradients(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                                  const float* g, const float* activated_out, float scale,
                                  const SageGradients& grads);

}  // namespace tessera::nn::detail
