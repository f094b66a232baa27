// Row-major float GEMM straight on the BLAS that libtorch itself calls
// (libblas.so.3's Fortran sgemm_), for kernels that run a layer's GEMMs on
// raw buffers: no dispatch, no autograd, no temporaries, and C can be
// accumulated into (beta = 1) instead of summed in a separate pass.
#pragma once

#include <cstdint>

namespace tessera::nn::detail {

// C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, all row-major:
// A is stored m x k (k x m when trans_a) with row stride lda, B likewise,
// C with row stride ldc. Any of m, n, k may be 0 (then the pointers may be
// null; k == 0 leaves beta * C).
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tessera::nn::detail
