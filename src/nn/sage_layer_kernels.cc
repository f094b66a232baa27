#include "nn/sage_layer_kernels.h"

#include <algorithm>

#include "nn/csr_kernels.h"
#include "nn/gemm.h"
#include "nn/narrow_sage_layer.h"

namespace tessera::nn::detail {
namespace {

// Adds bias to each of the n rows of y (out floats each).
void add_bias(float* y, const float* bias, int64_t n, int64_t out) {
  for (int64_t i = 0; i < n; ++i) {
    float* row = y + i * out;
#pragma omp simd
    for (int64_t j = 0; j < out; ++j) row[j] += bias[j];
  }
}

// Column sums of g [n x out]: the bias's gradient.
void column_sums(const float* g, int64_t n, int64_t out, float* sums) {
  std::fill(sums, sums + out, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = g + i * out;
#pragma omp simd
    for (int64_t j = 0; j < out; ++j) sums[j] += row[j];
  }
}

// g_y = out > 0 ? g * scale : 0 (relu and dropout's backward through the
// layer's output) and, when sums is not null, g_y's column sums (the bias's
// gradient), in one pass over g.
void unmask_gradient(const float* g, const float* out, int64_t n, int64_t width, float scale, float* g_y,
                     float* sums) {
  if (sums != nullptr) std::fill(sums, sums + width, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float *gr = g + i * width, *o = out + i * width;
    float* r = g_y + i * width;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) r[j] = o[j] > 0.0f ? gr[j] * scale : 0.0f;
    if (sums != nullptr) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) sums[j] += r[j];
    }
  }
}

}  // namespace

void sage_block_forward(const SageBlock& b, const SageWeights& w, const float* x, float* scratch, float* y) {
  const int64_t num_src = b.num_src, num_dst = b.num_dst, in = b.in, out = b.out;
  if (b.linear_first) {
    gemm(false, true, num_src, out, in, 1.0f, x, in, w.w_neigh, in, 0.0f, scratch, out);
    if (num_dst > 0) gather_rows(scratch, b.indptr, b.indices, num_dst, out, b.reduce, y);
  } else {
    if (num_dst > 0) gather_rows(x, b.indptr, b.indices, num_dst, in, b.reduce, scratch);
    gemm(false, true, num_dst, out, in, 1.0f, scratch, in, w.w_neigh, in, 0.0f, y, out);
  }
  if (w.w_self != nullptr) gemm(false, true, num_dst, out, in, 1.0f, x, in, w.w_self, in, 1.0f, y, out);
  if (w.bias != nullptr) add_bias(y, w.bias, num_dst, out);
}

// Gradients of y = x_dst Ws^T + A x Wn^T + b, with A the block's (scaled)
// adjacency: dWs = g^T x_dst, db = column sums of g, dWn = g^T (A x) =
// (A^T g)^T x, dx = A^T (g Wn) + [g Ws; 0].
void sage_block_backward(const SageBlock& b, const SageWeights& w, const float* x, const float* forward_scratch,
                         const float* g, float* scratch, const SageGradients& grads) {
  const int64_t num_src = b.num_src, num_dst = b.num_dst, in = b.in, out = b.out;
  if (grads.dw_self != nullptr) gemm(true, false, out, in, num_dst, 1.0f, g, out, x, in, 0.0f, grads.dw_self, in);
  if (grads.db != nullptr) column_sums(g, num_dst, out, grads.db);
  if (b.linear_first) {
    // A^T g serves both the weight's gradient and the input's.
    if ((grads.dw_neigh != nullptr || grads.dx != nullptr) && num_src > 0)
      scatter_rows(g, b.indptr, b.indices, num_dst, num_src, out, b.reduce, scratch);
    if (grads.dw_neigh != nullptr)
      gemm(true, false, out, in, num_src, 1.0f, scratch, out, x, in, 0.0f, grads.dw_neigh, in);
    if (grads.dx != nullptr) gemm(false, false, num_src, in, out, 1.0f, scratch, out, w.w_neigh, in, 0.0f, grads.dx, in);
  } else {
    if (grads.dw_neigh != nullptr)
      gemm(true, false, out, in, num_dst, 1.0f, g, out, forward_scratch, in, 0.0f, grads.dw_neigh, in);
    if (grads.dx != nullptr) {
      gemm(false, false, num_dst, in, out, 1.0f, g, out, w.w_neigh, in, 0.0f, scratch, in);
      if (num_src > 0) scatter_rows(scratch, b.indptr, b.indices, num_dst, num_src, in, b.reduce, grads.dx);
    }
  }
  // The destinations' own term: their rows of dx gain g Ws.
  if (grads.dx != nullptr && w.w_self != nullptr)
    gemm(false, false, num_dst, in, out, 1.0f, g, out, w.w_self, in, 1.0f, grads.dx, in);
}

void sage_aggregated_forward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                             const SageWeights& w, const DropoutDraw* then, float* y) {
  if (narrow_sage_forward(n, in, out, x_dst, aggregated, w, then, y)) return;
  gemm(false, true, n, out, in, 1.0f, aggregated, in, w.w_neigh, in, 0.0f, y, out);
  if (w.w_self != nullptr) gemm(false, true, n, out, in, 1.0f, x_dst, in, w.w_self, in, 1.0f, y, out);
  if (w.bias != nullptr) add_bias(y, w.bias, n, out);
  if (then != nullptr && n * out > 0) relu_dropout_forward(y, n * out, *then, y);
}

void sage_aggregated_backward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                              const SageWeights& w, const float* g, const float* activated_out, float scale,
                              float* g_scratch, const SageGradients& grads) {
  if (grads.dx == nullptr && grads.dx_dst == nullptr && grads.dw_neigh != nullptr &&
      narrow_sage_weight_gradients(n, in, out, x_dst, aggregated, g, activated_out, scale, grads))
    return;
  if (activated_out != nullptr) {
    // Back through relu and dropout first; the bias's gradient comes in the same pass.
    unmask_gradient(g, activated_out, n, out, scale, g_scratch, grads.db);
    g = g_scratch;
  } else if (grads.db != nullptr) {
    column_sums(g, n, out, grads.db);
  }
  // Weight gradients g^T rows; input gradients g W.
  if (grads.dx != nullptr) gemm(false, false, n, in, out, 1.0f, g, out, w.w_neigh, in, 0.0f, grads.dx, in);
  if (grads.dw_neigh != nullptr) gemm(true, false, out, in, n, 1.0f, g, out, aggregated, in, 0.0f, grads.dw_neigh, in);
  if (w.w_self == nullptr) return;
  if (grads.dx_dst != nullptr) gemm(false, false, n, in, out, 1.0f, g, out, w.w_self, in, 0.0f, grads.dx_dst, in);
  if (grads.dw_self != nullptr) gemm(true, false, out, in, n, 1.0f, g, out, x_dst, in, 0.0f, grads.dw_self, in);
}

}  // namespace tessera::nn::detail
