// GEMMs with one narrow side (at most kNarrowMax columns of output, or rows
// of a weight's gradient), as a GNN layer's linears run them on a mini-batch:
// thousands of rows times a [16 x 100] weight, forward and for the weight's
// gradient. A BLAS packs the thousands-of-rows operand into panels before
// every such call, which is most of its time at these shapes; these kernels
// read it in place, row by row, with the narrow side in vector registers.
//
// Only in the kernels' AVX-512 build (x86-64-v4, which glibc loads where the
// CPU has it: cmake/kernels.cmake). Results equal a BLAS's to
// float rounding (each output element sums its products in another order).
#pragma once

#include <cstdint>

namespace tessera::nn::detail {

// The widest narrow side the kernels take: three AVX-512 registers (a
// 47-class output layer fits).
constexpr int64_t kNarrowMax = 48;

// Whether the kernels loaded have these (their x86-64-v4 build).
bool narrow_gemm_available();

// gemm()'s contract (nn/gemm.h) where this build has the kernels and the
// shape has a narrow side: C = x W^T or g W (!trans_a) with n <= kNarrowMax,
// or a weight's gradient g^T x (trans_a, !trans_b) with m <= kNarrowMax.
// Returns true when it computed C; false, having touched nothing, when the
// shape or the build is not theirs. m, n, k >= 1.
bool narrow_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tessera::nn::detail
