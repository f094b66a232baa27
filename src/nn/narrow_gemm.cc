#include "nn/narrow_gemm.h"

#include "nn/narrow_schedule.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <vector>

namespace tessera::nn::detail {

#if defined(__AVX512F__)
namespace {

// R rows of C from R rows of A: each element of A broadcast against the
// packed row of B it multiplies, R x NB accumulators in registers.
template <int R, int NB>
inline void rows_times_packed(const float* a, int64_t lda, int64_t k, const float* packed, float alpha, float beta,
                              float* c, int64_t ldc, const __mmask16* masks) {
  // The kernels are built at -O2, which does not unroll these loops by
  // itself; unrolled, the accumulators live in registers.
  __m512 acc[R][NB];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) acc[r][b] = _mm512_setzero_ps();
  // The rows kPrefetchBlocks blocks ahead, a cache line an iteration:
  // mini-batch inputs arrive from memory, and a dozen interleaved row
  // streams are more than the hardware prefetcher follows far enough ahead.
  const char* next = reinterpret_cast<const char*>(a + kPrefetchBlocks * R * lda);
  const int64_t next_lines = R * lda * static_cast<int64_t>(sizeof(float)) / 64;
  for (int64_t kk = 0; kk < k; ++kk) {
    if (kk < next_lines) _mm_prefetch(next + kk * 64, _MM_HINT_T0);
    __m512 w[NB];
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) w[b] = _mm512_loadu_ps(packed + (kk * NB + b) * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + kk]);
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) acc[r][b] = _mm512_fmadd_ps(x, w[b], acc[r][b]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      float* out = c + r * ldc + b * kLanes;
      __m512 v = alpha == 1.0f ? acc[r][b] : _mm512_mul_ps(va, acc[r][b]);
      if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(masks[b], out), v);
      _mm512_mask_storeu_ps(out, masks[b], v);
    }
}

template <int NB>
void times_packed(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const std::vector<float>& packed, float beta, float* c, int64_t ldc) {
  constexpr int R = kRowsTimesPacked<NB>;
  __mmask16 masks[NB];
  for (int b = 0; b < NB; ++b) masks[b] = lane_mask(n - b * kLanes);
  const int64_t blocks = m / R;
#pragma omp parallel for schedule(static) if (times_packed_in_parallel(m, n, k))
  for (int64_t blk = 0; blk < blocks; ++blk)
    rows_times_packed<R, NB>(a + blk * R * lda, lda, k, packed.data(), alpha, beta, c + blk * R * ldc, ldc, masks);
  for (int64_t i = blocks * R; i < m; ++i)
    rows_times_packed<1, NB>(a + i * lda, lda, k, packed.data(), alpha, beta, c + i * ldc, ldc, masks);
}

template <int NB>
void narrow_n(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
              int64_t ldb, bool b_transposed, float beta, float* c, int64_t ldc) {
  times_packed<NB>(m, n, k, alpha, a, lda, pack_rows<NB>(n, k, b, ldb, b_transposed), beta, c, ldc);
}

void narrow_n_dispatch(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, bool b_transposed, float beta, float* c, int64_t ldc) {
  if (n <= kLanes) return narrow_n<1>(m, n, k, alpha, a, lda, b, ldb, b_transposed, beta, c, ldc);
  if (n <= 2 * kLanes) return narrow_n<2>(m, n, k, alpha, a, lda, b, ldb, b_transposed, beta, c, ldc);
  narrow_n<3>(m, n, k, alpha, a, lda, b, ldb, b_transposed, beta, c, ldc);
}

// Adds R rows' outer products g_r^T x_r into the n x NB-register sums: per
// column j of x, its R elements broadcast against the R rows of g. Two
// chains of R / 2 FMAs per column, so consecutive columns overlap.
template <int R, int NB>
inline void add_outer_products(const float* g, int64_t ldg, const float* x, int64_t ldx, int64_t n,
                               const __mmask16* masks, float* sums) {
  __m512 gr[R][NB];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) gr[r][b] = _mm512_maskz_loadu_ps(masks[b], g + r * ldg + b * kLanes);
  const char* next = reinterpret_cast<const char*>(x + kPrefetchBlocks * R * ldx);  // as rows_times_packed
  const int64_t next_lines = R * ldx * static_cast<int64_t>(sizeof(float)) / 64;
  for (int64_t j = 0; j < n; ++j) {
    if (j < next_lines) _mm_prefetch(next + j * 64, _MM_HINT_T0);
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      float* s = sums + (j * NB + b) * kLanes;
      __m512 lo = _mm512_loadu_ps(s), hi = _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const __m512 v = _mm512_set1_ps(x[r * ldx + j]);
        if (r < (R + 1) / 2) lo = _mm512_fmadd_ps(v, gr[r][b], lo);
        else hi = _mm512_fmadd_ps(v, gr[r][b], hi);
      }
      _mm512_storeu_ps(s, _mm512_add_ps(lo, hi));
    }
  }
}

// sums[n x NB registers] += g[rows]^T x[rows] over rows [begin, end).
template <int NB>
void outer_products(const float* g, int64_t ldg, const float* x, int64_t ldx, int64_t n, int64_t begin, int64_t end,
                    const __mmask16* masks, float* sums) {
  constexpr int R = kRowsOuterProducts<NB>;
  int64_t i = begin;
  for (; i + R <= end; i += R) add_outer_products<R, NB>(g + i * ldg, ldg, x + i * ldx, ldx, n, masks, sums);
  for (; i < end; ++i) add_outer_products<1, NB>(g + i * ldg, ldg, x + i * ldx, ldx, n, masks, sums);
}

template <int NB>
void narrow_m(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
              int64_t ldb, float beta, float* c, int64_t ldc) {
  __mmask16 masks[NB];
  for (int nb = 0; nb < NB; ++nb) masks[nb] = lane_mask(m - nb * kLanes);
  const int64_t width = n * NB * kLanes;
  // One block of sums per thread over its own share of the rows, added up
  // after in thread order: the same bits for a given thread count.
  const int threads = outer_product_threads(m, n, k);
  std::vector<float> sums(static_cast<size_t>(threads * width), 0.0f);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    const int64_t begin = k * t / team, end = k * (t + 1) / team;
    outer_products<NB>(a, lda, b, ldb, n, begin, end, masks, sums.data() + t * width);
  }
  for (int t = 1; t < threads; ++t)
    for (int64_t e = 0; e < width; ++e) sums[e] += sums[t * width + e];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float v = alpha * sums[j * NB * kLanes + i];
      c[i * ldc + j] = beta == 0.0f ? v : v + beta * c[i * ldc + j];
    }
}

}  // namespace

bool narrow_gemm_available() { return true; }

bool narrow_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (!trans_a && n <= kNarrowMax) {  // x W^T (trans_b) or g W
    narrow_n_dispatch(m, n, k, alpha, a, lda, b, ldb, trans_b, beta, c, ldc);
    return true;
  }
  if (!trans_a || trans_b || m > kNarrowMax) return false;
  if (m <= kLanes) narrow_m<1>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  // g^T x
  else if (m <= 2 * kLanes) narrow_m<2>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else narrow_m<3>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}

#else  // no AVX-512 in this build: every shape stays with the BLAS

bool narrow_gemm_available() { return false; }

bool narrow_gemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                 float*, int64_t) {
  return false;
}

#endif

}  // namespace tessera::nn::detail
