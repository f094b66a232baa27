#include "nn/gemm.h"

#include <algorithm>
#include <limits>

#include "tessera/base/error.h"
#include "nn/narrow_gemm.h"

// The reference BLAS interface; every libblas.so.3 (OpenBLAS's included) has it.
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc);

namespace tessera::nn::detail {
namespace {

int blas_int(int64_t v, const char* what) {
  if (v > std::numeric_limits<int>::max()) fail("gemm: {} = {} exceeds the BLAS's 32-bit sizes", what, v);
  return static_cast<int>(v);
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS would do this too, but its leading-dimension checks want k >= 1
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  // A narrow side (a GNN layer's 16 hidden units or 47 classes against
  // thousands of rows): kernels that skip the BLAS's packing of the long operand.
  if (narrow_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
  // same call with the operands swapped.
  const int M = blas_int(n, "n"), N = blas_int(m, "m"), K = blas_int(k, "k");
  const int LDA = blas_int(std::max<int64_t>(ldb, 1), "ldb"), LDB = blas_int(std::max<int64_t>(lda, 1), "lda");
  const int LDC = blas_int(std::max<int64_t>(ldc, 1), "ldc");
  const char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
  sgemm_(&ta, &tb, &M, &N, &K, &alpha, b, &LDA, a, &LDB, &beta, c, &LDC);
}

}  // namespace tessera::nn::detail
