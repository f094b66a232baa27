// Neighbour aggregation over a CSR block (destinations x sources), the one sparse operation GraphSAGE needs.
// Hand-written forward and backward kernels over raw pointers: a dense adjacency or an index_select of every
// edge would materialise nnz x f floats, which is what sampled minibatches cannot afford.
//
// A public header whose API is libtorch's: it includes only the libtorch headers its declarations need (a program
// includes <torch/torch.h> for the rest). csr_aggregate() returns a new tensor and keeps no state; the autograd graph
// keeps indptr and indices (and any memory they view) until its backward has run or it is freed. The kernels split
// work over the calling thread's OpenMP threads, and gradients come out the same whatever the thread count; calls
// from several threads are independent. Malformed input throws tessera::Error naming the operation and the problem
// (dtype, device, shape, indptr not starting at 0 or decreasing, an index out of range).
#pragma once

#include <torch/types.h>

#include "tessera/nn/csr_reduce.h"

namespace tessera::nn {

// x: float32 [num_src, f] on the CPU; indptr: int64 [num_dst + 1] with
// indptr[0] == 0, non-decreasing, ending at nnz; indices: int64 [nnz], rows
// of x. Returns float32 [num_dst, f]. Differentiable in x (only x); the
// backward is skipped when x does not require grad. Malformed input throws
// tessera::Error naming the problem.
torch::Tensor csr_aggregate(const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                            CsrReduce reduce);

inline torch::Tensor csr_sum(const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices) {
  return csr_aggregate(x, indptr, indices, CsrReduce::kSum);
}

inline torch::Tensor csr_mean(const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices) {
  return csr_aggregate(x, indptr, indices, CsrReduce::kMean);
}

}  // namespace tessera::nn
