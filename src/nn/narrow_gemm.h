// GEMMs with one narrow side (at most kNarrowMax columns of output, or of
// the reduced operand), as a GNN layer's linears run them on a mini-batch:
// thousands of rows times a [16 x 100] weight, forward and for the weight's
// gradient. A BLAS packs the thousands-of-rows operand into panels before
// every such call, which is most of its time at these shapes; these kernels
// read it in place, row by row, with the narrow side in vector registers.
//
// Only where the kernels are built with AVX-512 (tessera_kernels is compiled
// for the host); narrow_gemm_available() says so. Results equal a BLAS's to
// float rounding (each output element sums its products in another order).
#pragma once

#include <cstdint>

namespace tessera::nn::detail {

// The widest narrow side the kernels take: three AVX-512 registers (a
// 47-class output layer fits).
constexpr int64_t kNarrowMax = 48;

// Whether this build has the kernels (else the functions below must not be
// called: gemm() falls back to the BLAS).
bool narrow_gemm_available();

// C[m x n] = alpha * A[m x k] * B^T + beta * C, with B stored n x k (a
// weight [out x in]), all row-major with strides lda, ldb, ldc; n <= kNarrowMax.
// beta == 0 never reads C.
void narrow_gemm_nt(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc);

// C[m x n] = alpha * A[m x k] * B + beta * C, with B stored k x n (an input's
// gradient through a weight [out x in] of narrow in); n <= kNarrowMax.
void narrow_gemm_nn(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc);

// C[m x n] = alpha * A^T * B + beta * C, with A stored k x m (a gradient
// [rows x out]) and B k x n (the layer's input [rows x in]); m <= kNarrowMax.
// The weight's gradient: a sum over the k rows of outer products.
void narrow_gemm_tn(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tessera::nn::detail
