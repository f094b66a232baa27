// Fused pairwise L1 distances for the chunked negative scores of the models
// that cannot use a matrix product (TransE_l1, RotatE). Broadcasting them in
// libtorch materialises [chunks, positives, negatives, dim] tensors several
// times over, forward and backward: RotatE on FB15k-237 with DGL-KE's sizes
// ran at 0.7 steps/s on 2 cores that way. These kernels stream over the
// rows instead and recompute differences in the backward pass.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

namespace tessera::kge {

// a [C, K, D], b [C, N, D] -> [C, K, N]: sum_d |a[c,k,d] - b[c,n,d]|.
torch::Tensor pairwise_l1(const torch::Tensor& a, const torch::Tensor& b);

// The complex version: rows are (real, imaginary) halves given separately,
// each [C, K, D] / [C, N, D]; the result is sum_d of the complex modulus of
// the difference, as RotatE's distance.
torch::Tensor pairwise_complex_l1(const torch::Tensor& a_re, const torch::Tensor& a_im, const torch::Tensor& b_re,
                                  const torch::Tensor& b_im);

}  // namespace tessera::kge
