// The dense reference of a CSR block's reduction, for checking the CSR
// kernels (sage_test.cc, fused_sage_conv_test.cc) against a plain matmul.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "tessera/nn/csr_aggregate.h"

namespace tessera::testing {

// The reduction as a dense [num_dst, num_src] matrix A, so that
// csr_aggregate(x, indptr, indices, reduce) == A x.
inline torch::Tensor dense_reduction(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices,
                                     int64_t num_src, nn::CsrReduce reduce, torch::Dtype dtype = torch::kFloat32) {
  const int64_t num_dst = static_cast<int64_t>(indptr.size()) - 1;
  torch::Tensor a = torch::zeros({num_dst, num_src}, torch::kFloat64);
  auto acc = a.accessor<double, 2>();
  for (int64_t d = 0; d < num_dst; ++d) {
    const int64_t deg = indptr[d + 1] - indptr[d];
    double w = 1.0;
    if (reduce == nn::CsrReduce::kMean && deg > 0) w = 1.0 / static_cast<double>(deg);
    if (reduce == nn::CsrReduce::kGcnMean) w = 1.0 / static_cast<double>(deg + 1);
    for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) acc[d][indices[e]] += w;
    if (reduce == nn::CsrReduce::kGcnMean) acc[d][d] += w;
  }
  return a.to(dtype);
}

}  // namespace tessera::testing
