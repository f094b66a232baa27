// The pairwise distance kernels of TransE_l1 and RotatE written out for
// AVX-512, for blocks of rows of `a`. They are nearly all of a RotatE step,
// and the plain loops of distance_kernels.cc left most of the vector unit
// idle. Measured on RotatE's FB15k-237 shapes (d 200, 256 x 256 pairs a
// chunk), three changes:
// - kRows rows of `a` go against each row of `b` together, so a row of b
//   (and, backward, its gradient) is loaded once per block, not once per row;
//   backward, the element loop is outermost, so a block's gradients stay in
//   registers across all of b: the load/store traffic that bound the backward
//   pass falls several-fold;
// - 1 / |a - b| is the hardware's reciprocal square root refined by one
//   Newton step to float precision, instead of a square root and a division
//   (forward, |a - b| = sq / |a - b|);
// - the last d % 16 elements of a row run as one masked vector: d 200 left 8
//   of them to scalar code, a quarter of the time.
// Together, with blocks of 8 rows: forward 1.5x, backward 2x faster.
//
// Included by distance_kernels.cc only, when it is built for AVX-512.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "distance_kernels.h"

namespace tessera::kge::avx512 {

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// Squared moduli of the differences plus 1e-30: where a = b the gradient's
// scale stays finite and multiplies a zero difference (1e-30 moves no
// distance that matters, and saves a clamp per element).
inline __m512 squared_modulus(__m512 x, __m512 y) {
  return _mm512_fmadd_ps(x, x, _mm512_fmadd_ps(y, y, _mm512_set1_ps(1e-30f)));
}

// r = the hardware's 14-bit estimate of 1 / sqrt(sq); r (1.5 - sq r^2 / 2) is
// one Newton step, to float precision.
inline __m512 newton_factor(__m512 sq, __m512 r) {
  return _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), _mm512_mul_ps(_mm512_mul_ps(sq, r), r), _mm512_set1_ps(1.5f));
}
// w / sqrt(sq)
inline __m512 scaled_inverse_sqrt(__m512 w, __m512 sq) {
  const __m512 r = _mm512_rsqrt14_ps(sq);
  return _mm512_mul_ps(_mm512_mul_ps(w, r), newton_factor(sq, r));
}
// sqrt(sq)
inline __m512 fast_sqrt(__m512 sq) {
  const __m512 r = _mm512_rsqrt14_ps(sq);
  return _mm512_mul_ps(_mm512_mul_ps(sq, r), newton_factor(sq, r));
}

// w sign(x): w with its sign flipped where x < 0 (an integer xor of the sign
// bits, which plain AVX-512F has for floats only through casts).
inline __m512 times_sign(__m512 w, __m512 x) {
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(w), sign));
}

// out[c, k, n] = sum_j |a - b| (complex: the moduli) for k in [k0, k0 + kRows).
template <bool kComplex, int kRows>
void forward_block(RowBlock a, RowBlock b, const PairShape& s, int64_t c, int64_t k0, float* out) {
  const int64_t d = s.d;
  for (int64_t n = 0; n < s.n; ++n) {
    const int64_t brow = (c * s.n + n) * b.stride;
    __m512 sum[kRows];
#pragma GCC unroll 8
    for (int q = 0; q < kRows; ++q) sum[q] = _mm512_setzero_ps();
    for (int64_t j = 0; j < d; j += 16) {
      const __mmask16 m = tail_mask(d - j);
      const __m512 br = _mm512_maskz_loadu_ps(m, b.re + brow + j);
      const __m512 bi = kComplex ? _mm512_maskz_loadu_ps(m, b.im + brow + j) : br;
#pragma GCC unroll 8
      for (int q = 0; q < kRows; ++q) {
        const int64_t arow = (c * s.k + k0 + q) * a.stride + j;
        const __m512 x = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a.re + arow), br);
        if constexpr (kComplex) {
          const __m512 y = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a.im + arow), bi);
          sum[q] = _mm512_add_ps(sum[q], fast_sqrt(squared_modulus(x, y)));
        } else {
          sum[q] = _mm512_add_ps(sum[q], _mm512_abs_ps(x));
        }
      }
    }
#pragma GCC unroll 8
    for (int q = 0; q < kRows; ++q) out[(c * s.k + k0 + q) * s.n + n] = _mm512_reduce_add_ps(sum[q]);
  }
}

// ga[c, k] += sum_n g d|a - b|/da, gb[c, n] -= the same summed over the
// block's k, for k in [k0, k0 + kRows). The slope of |x| at 0 is 0, as in
// libtorch.
template <bool kComplex, int kRows>
void backward_block(RowBlock a, RowBlock b, const float* grad, const PairShape& s, GradBlock ga, GradBlock gb,
                    int64_t c, int64_t k0) {
  const int64_t d = s.d;
  const float* g = grad + (c * s.k + k0) * s.n;
  for (int64_t j = 0; j < d; j += 16) {
    const __mmask16 m = tail_mask(d - j);
    __m512 ar[kRows], ai[kRows], dar[kRows], dai[kRows];
#pragma GCC unroll 8
    for (int q = 0; q < kRows; ++q) {
      const int64_t arow = (c * s.k + k0 + q) * a.stride + j;
      ar[q] = _mm512_maskz_loadu_ps(m, a.re + arow);
      ai[q] = kComplex ? _mm512_maskz_loadu_ps(m, a.im + arow) : ar[q];
      dar[q] = dai[q] = _mm512_setzero_ps();
    }
    for (int64_t n = 0; n < s.n; ++n) {
      const int64_t brow = (c * s.n + n) * b.stride + j, gbrow = (c * s.n + n) * gb.stride + j;
      const __m512 br = _mm512_maskz_loadu_ps(m, b.re + brow);
      const __m512 bi = kComplex ? _mm512_maskz_loadu_ps(m, b.im + brow) : br;
      __m512 dbr = _mm512_setzero_ps(), dbi = _mm512_setzero_ps();
#pragma GCC unroll 8
      for (int q = 0; q < kRows; ++q) {
        const __m512 w = _mm512_set1_ps(g[q * s.n + n]);
        const __m512 x = _mm512_sub_ps(ar[q], br);
        if constexpr (kComplex) {
          const __m512 y = _mm512_sub_ps(ai[q], bi);
          const __m512 scale = scaled_inverse_sqrt(w, squared_modulus(x, y));
          dar[q] = _mm512_fmadd_ps(x, scale, dar[q]);
          dai[q] = _mm512_fmadd_ps(y, scale, dai[q]);
          dbr = _mm512_fmadd_ps(x, scale, dbr);
          dbi = _mm512_fmadd_ps(y, scale, dbi);
        } else {
          const __mmask16 nonzero = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NEQ_OQ);
          const __m512 v = times_sign(w, x);
          dar[q] = _mm512_mask_add_ps(dar[q], nonzero, dar[q], v);
          dbr = _mm512_mask_add_ps(dbr, nonzero, dbr, v);
        }
      }
      _mm512_mask_storeu_ps(gb.re + gbrow, m, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, gb.re + gbrow), dbr));
      if constexpr (kComplex)
        _mm512_mask_storeu_ps(gb.im + gbrow, m, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, gb.im + gbrow), dbi));
    }
#pragma GCC unroll 8
    for (int q = 0; q < kRows; ++q) {
      const int64_t garow = (c * s.k + k0 + q) * ga.stride + j;
      _mm512_mask_storeu_ps(ga.re + garow, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, ga.re + garow), dar[q]));
      if constexpr (kComplex)
        _mm512_mask_storeu_ps(ga.im + garow, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, ga.im + garow), dai[q]));
    }
  }
}

}  // namespace tessera::kge::avx512
