#include "nn/narrow_sage_layer.h"

#include "nn/narrow_schedule.h"

#include <omp.h>

#include <algorithm>
#include <vector>

namespace tessera::nn::detail {

#if defined(__AVX512F__)
namespace {

// The narrow GEMMs' row blocks for a one-register side, whose sums these
// must reproduce.
constexpr int kForwardRows = kRowsTimesPacked<1>;
constexpr int kGradientRows = kRowsOuterProducts<1>;
static_assert(kOnePassMax == kLanes, "the one-pass kernels hold a row in one register");

// The lanes of an output row that dropout keeps: element e's draw is
// quad_draws(e / 4)'s 16 bits at e % 4, as relu_dropout_forward reads them.
// A row that starts a quad (widths that are multiples of 4) hashes its four
// quads in one register, as that pass's vectorised loop does; scalar hashes
// lane by lane made the one-pass forward slower than the passes it replaces.
__mmask16 kept_lanes(const DropoutDraw& d, int64_t first, int64_t width) {
  if (d.keep_below >= (1u << 16)) return lane_mask(width);  // relu alone keeps every lane
  const __m512i keep_below = _mm512_set1_epi32(static_cast<int>(d.keep_below));
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
  if ((first & 3) == 0) {
    const __m256i z = quad_draws_x4(d, static_cast<uint64_t>(first) >> 2);
    // Little-endian: lane 4q + p is quad q's p-th 16 bits.
    return _mm512_cmplt_epu32_mask(_mm512_cvtepu16_epi32(z), keep_below) & lane_mask(width);
  }
#endif
  uint32_t kept = 0;
  uint64_t quad = static_cast<uint64_t>(first) >> 2, bits = quad_draws(d, quad);
  for (int64_t j = 0; j < width; ++j) {
    const uint64_t e = static_cast<uint64_t>(first + j);
    if (e >> 2 != quad) bits = quad_draws(d, quad = e >> 2);
    if (((bits >> (16 * (e & 3))) & 0xffff) < d.keep_below) kept |= 1u << j;
  }
  return static_cast<__mmask16>(kept);
}

struct ForwardArgs {
  const float *x_dst, *aggregated, *w_self, *w_neigh;  // x_dst null without w_self; the weights packed
  int64_t in, out;
  const float* bias;
  const DropoutDraw* then;
  float* y;
};

// acc[r] = row r of `rows` (in floats each) times the packed weight, a
// register per input column: the narrow GEMM's loop.
template <int R>
inline void multiply_rows(const float* rows, int64_t in, const float* packed, __m512* acc) {
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  // The rows kPrefetchBlocks blocks ahead, a cache line an iteration, as the narrow GEMM does.
  const char* next = reinterpret_cast<const char*>(rows + kPrefetchBlocks * R * in);
  const int64_t next_lines = R * in * static_cast<int64_t>(sizeof(float)) / 64;
  for (int64_t k = 0; k < in; ++k) {
    if (k < next_lines) _mm_prefetch(next + k * 64, _MM_HINT_T0);
    const __m512 w = _mm512_loadu_ps(packed + k * kLanes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(rows[r * in + k]), w, acc[r]);
  }
}

// Output rows [row, row + R): the neighbours' product, stored; the self
// product added to it (the rows still in L1) with the bias, then the
// activation, stored again. Both products at once would hold twice the
// accumulators, fewer rows a block: slower here (0.25 against 0.21 ms).
template <int R>
inline void forward_rows(const ForwardArgs& a, int64_t row) {
  const int64_t in = a.in;
  const __mmask16 mask = lane_mask(a.out);
  float* y = a.y + row * a.out;
  __m512 acc[R];
  multiply_rows<R>(a.aggregated + row * in, in, a.w_neigh, acc);
  if (a.x_dst != nullptr) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * a.out, mask, acc[r]);
    multiply_rows<R>(a.x_dst + row * in, in, a.w_self, acc);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, y + r * a.out), acc[r]);
  }
  const __m512 bias = a.bias != nullptr ? _mm512_maskz_loadu_ps(mask, a.bias) : _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    __m512 v = acc[r];
    if (a.bias != nullptr) v = _mm512_add_ps(v, bias);
    if (a.then != nullptr) {
      const __mmask16 keep = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ) &
                             kept_lanes(*a.then, (row + r) * a.out, a.out);
      v = _mm512_maskz_mul_ps(keep, v, _mm512_set1_ps(a.then->scale));
    }
    _mm512_mask_storeu_ps(y + r * a.out, mask, v);
  }
}

void forward_all(const ForwardArgs& a, int64_t n) {
  constexpr int R = kForwardRows;
  const int64_t blocks = n / R;
#pragma omp parallel for schedule(static) if (times_packed_in_parallel(n, a.out, a.in))
  for (int64_t b = 0; b < blocks; ++b) forward_rows<R>(a, b * R);
  for (int64_t i = blocks * R; i < n; ++i) forward_rows<1>(a, i);
}

struct GradientArgs {
  const float *x_dst, *aggregated, *g, *activated_out;
  float scale;
  int64_t in, out;
  float *sums_self, *sums_neigh;  // [in x one register]: column j's sums over the output lanes
  __m512 bias_sums;
};

// sums += the R rows' elements of one input column (column[r * in]) times
// their gradient rows gr[r], in two chains as narrow_gemm.cc's
// add_outer_products adds them.
template <int R>
inline void add_column(const float* column, int64_t in, const __m512* gr, float* sums) {
  __m512 lo = _mm512_loadu_ps(sums), hi = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const __m512 v = _mm512_set1_ps(column[r * in]);
    if (r < (R + 1) / 2) lo = _mm512_fmadd_ps(v, gr[r], lo);
    else hi = _mm512_fmadd_ps(v, gr[r], hi);
  }
  _mm512_storeu_ps(sums, _mm512_add_ps(lo, hi));
}

// Adds rows [row, row + R) of the unmasked gradient's outer products with
// both inputs, column by column, and the rows themselves to the bias's sums.
template <int R, bool Self>
inline void add_gradient_rows(GradientArgs& a, int64_t row) {
  const int64_t in = a.in;
  const __mmask16 mask = lane_mask(a.out);
  __m512 gr[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    __m512 v = _mm512_maskz_loadu_ps(mask, a.g + (row + r) * a.out);
    if (a.activated_out != nullptr) {  // back through relu and dropout, as unmask_gradient
      const __m512 o = _mm512_maskz_loadu_ps(mask, a.activated_out + (row + r) * a.out);
      v = _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(o, _mm512_setzero_ps(), _CMP_GT_OQ), v, _mm512_set1_ps(a.scale));
    }
    gr[r] = v;
    a.bias_sums = _mm512_add_ps(a.bias_sums, v);
  }
  const float* agg = a.aggregated + row * in;
  const float* x = Self ? a.x_dst + row * in : nullptr;
  const char* next_agg = reinterpret_cast<const char*>(agg + kPrefetchBlocks * R * in);
  const char* next_x = Self ? reinterpret_cast<const char*>(x + kPrefetchBlocks * R * in) : nullptr;
  const int64_t next_lines = R * in * static_cast<int64_t>(sizeof(float)) / 64;
  for (int64_t j = 0; j < in; ++j) {
    if (j < next_lines) {
      _mm_prefetch(next_agg + j * 64, _MM_HINT_T0);
      if (Self) _mm_prefetch(next_x + j * 64, _MM_HINT_T0);
    }
    add_column<R>(agg + j, in, gr, a.sums_neigh + j * kLanes);
    if (Self) add_column<R>(x + j, in, gr, a.sums_self + j * kLanes);
  }
}

template <bool Self>
void add_all_gradient_rows(GradientArgs& a, int64_t n) {
  int64_t i = 0;
  for (; i + kGradientRows <= n; i += kGradientRows) add_gradient_rows<kGradientRows, Self>(a, i);
  for (; i < n; ++i) add_gradient_rows<1, Self>(a, i);
}

// The sums' transpose: dw[o][j] = column j's sum at lane o.
void write_weight_gradient(const float* sums, int64_t in, int64_t out, float* dw) {
  for (int64_t o = 0; o < out; ++o)
    for (int64_t j = 0; j < in; ++j) dw[o * in + j] = sums[j * kLanes + o];
}

}  // namespace

bool narrow_sage_forward(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                         const SageWeights& w, const DropoutDraw* then, float* y) {
  if (out < 1 || out > kOnePassMax || in < 1) return false;
  const std::vector<float> neigh = pack_rows<1>(out, in, w.w_neigh, in, true);
  const std::vector<float> self = w.w_self != nullptr ? pack_rows<1>(out, in, w.w_self, in, true) : std::vector<float>();
  const ForwardArgs a{w.w_self != nullptr ? x_dst : nullptr, aggregated, self.data(), neigh.data(), in, out, w.bias,
                      then, y};
  forward_all(a, n);
  return true;
}

bool narrow_sage_weight_gradients(int64_t n, int64_t in, int64_t out, const float* x_dst, const float* aggregated,
                                  const float* g, const float* activated_out, float scale,
                                  const SageGradients& grads) {
  if (out < 1 || out > kOnePassMax || in < 1 || n < 1 || grads.dx != nullptr || grads.dx_dst != nullptr) return false;
  if (outer_product_threads(out, in, n) > 1) return false;  // the GEMM's sums would be added in another order
  const bool self = grads.dw_self != nullptr;
  std::vector<float> sums(static_cast<size_t>((self ? 2 : 1) * in * kLanes), 0.0f);
  GradientArgs a{x_dst, aggregated, g, activated_out, scale, in, out, self ? sums.data() + in * kLanes : nullptr,
                 sums.data(), _mm512_setzero_ps()};
  if (self) add_all_gradient_rows<true>(a, n);
  else add_all_gradient_rows<false>(a, n);
  write_weight_gradient(sums.data(), in, out, grads.dw_neigh);
  if (self) write_weight_gradient(sums.data() + in * kLanes, in, out, grads.dw_self);
  if (grads.db != nullptr) _mm512_mask_storeu_ps(grads.db, lane_mask(out), a.bias_sums);
  return true;
}

#else  // no AVX-512 in this build: the separate passes run

bool narrow_sage_forward(int64_t, int64_t, int64_t, const float*, const float*, const SageWeights&,
                         const DropoutDraw*, float*) {
  return false;
}

bool narrow_sage_weight_gradients(int64_t, int64_t, int64_t, const float*, const float*, const float*, const float*,
                                  float, const SageGradients&) {
  return false;
}

#endif

}  // namespace tessera::nn::detail
