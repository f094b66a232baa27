// Fused pairwise L1 distances for the chunked negative scores of the models
// that cannot use a matrix product (TransE_l1, RotatE). Broadcasting them in
// libtorch materialises [chunks, positives, negatives, dim] tensors several
// times over, forward and backward: RotatE on FB15k-237 with DGL-KE's sizes
// ran at 0.7 steps/s on 2 cores that way. These kernels stream over the
// rows instead and recompute differences in the backward pass.
//
// The raw kernels work on strided row blocks, so the fused step can pass the
// real and imaginary halves of its [re | im] rows in place; the autograd
// wrappers below them serve the reference path.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace tessera::kge {

// Rows of `d` floats, `stride` floats apart: the real parts at `re` and, for
// complex rows, the imaginary parts at `im` (nullptr for real rows).
struct RowBlock {
  const float* re;
  const float* im;
  int64_t stride;
};
// The gradients of a RowBlock, laid out as it is.
struct GradBlock {
  float* re;
  float* im;
  int64_t stride;
};

// Chunks of K rows of `a` against N rows of `b`, each row `d` wide.
struct PairShape {
  int64_t chunks, k, n, d;
};

// out [C, K, N] = sum_d |a - b|, or for complex rows the sum of the moduli of
// the differences (RotatE's distance).
void l1_distances(RowBlock a, RowBlock b, const PairShape& shape, float* out);

// Adds d(sum_ckn grad[c,k,n] * out[c,k,n]) / d a and / d b into ga and gb.
void l1_distances_backward(RowBlock a, RowBlock b, const float* grad, const PairShape& shape, GradBlock ga,
                           GradBlock gb);

// Autograd forms: a [C, K, D], b [C, N, D] -> [C, K, N].
torch::Tensor pairwise_l1(const torch::Tensor& a, const torch::Tensor& b);
torch::Tensor pairwise_complex_l1(const torch::Tensor& a_re, const torch::Tensor& a_im, const torch::Tensor& b_re,
                                  const torch::Tensor& b_im);

}  // namespace tessera::kge
