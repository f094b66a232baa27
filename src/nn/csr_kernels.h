// The CSR block kernels under csr_aggregate() and sage_conv(): raw-pointer
// loops with no checks of their own. check_block() is what makes them
// memory-safe; call it on every block that comes from outside first.
//
// A block has num_dst destinations, in-edges indptr[d] .. indptr[d + 1] into
// indices (rows of a num_src-row input). The kernels split their work over
// the calling thread's OpenMP team, and give the same bits whatever its size.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tessera/nn/csr_aggregate.h"

namespace tessera::nn::detail {

// Throws tessera::Error naming `op` and `what` unless t is a defined 1-D
// int64 CPU tensor.
void check_index_tensor(const char* op, const char* what, const torch::Tensor& t);

// Throws tessera::Error naming `op` unless indptr / indices are 1-D int64 CPU
// tensors (already contiguous) that form a valid CSR over num_src rows:
// indptr starts at 0, never decreases, ends at nnz; every index is a row.
// kGcnMean also needs num_dst <= num_src (destination d is source row d).
void check_block(const char* op, int64_t num_src, const torch::Tensor& indptr, const torch::Tensor& indices,
                 CsrReduce reduce);

// out[d] = reduce over d's in-edges of x's rows (f floats each); out has
// num_dst rows, every one written.
void gather_rows(const float* x, const int64_t* indptr, const int64_t* indices, int64_t num_dst, int64_t f,
                 CsrReduce reduce, float* out);

// The transpose: gx[s] = sum over edges (d -> s) of row_scale(d) * g[d], and
// for kGcnMean also row_scale(d) * g[d] into gx[d]. gx has num_src rows, all
// written (zeros where nothing lands).
void scatter_rows(const float* g, const int64_t* indptr, const int64_t* indices, int64_t num_dst, int64_t num_src,
                  int64_t f, CsrReduce reduce, float* gx);

}  // namespace tessera::nn::detail
