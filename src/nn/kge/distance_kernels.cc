#include "distance_kernels.h"

#include <omp.h>

#if defined(__AVX512F__)
#include "distance_blocks_avx512.h"
#endif

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Rows of `a` a kernel call takes together: 8 where the AVX-512 kernels of
// distance_blocks_avx512.h exist (their rationale is there), else one.
#if defined(__AVX512F__)
constexpr int kBlockRows = 8;
#else
constexpr int kBlockRows = 1;
#endif

// out[c, k, n] for one row k of `a`.
template <bool kComplex>
void forward_row(RowBlock a, RowBlock b, const PairShape& s, int64_t c, int64_t k, float* out) {
  const int64_t d = s.d;
  const int64_t arow = (c * s.k + k) * a.stride;
  const float* ar = a.re + arow;
  const float* ai = kComplex ? a.im + arow : nullptr;
  float* o = out + (c * s.k + k) * s.n;
  for (int64_t n = 0; n < s.n; ++n) {
    const int64_t brow = (c * s.n + n) * b.stride;
    const float* br = b.re + brow;
    float sum = 0;
    if constexpr (kComplex) {
      const float* bi = b.im + brow;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < d; ++j) {
        const float x = ar[j] - br[j], y = ai[j] - bi[j];
        sum += std::sqrt(x * x + y * y);
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < d; ++j) sum += std::fabs(ar[j] - br[j]);
    }
    o[n] = sum;
  }
}

// Rows [k0, k0 + kBlockRows) of chunk c (fewer at the end of a chunk).
template <bool kComplex>
void forward_block(RowBlock a, RowBlock b, const PairShape& s, int64_t c, int64_t k0, float* out) {
  const int64_t rows = std::min<int64_t>(kBlockRows, s.k - k0);
#if defined(__AVX512F__)
  if (rows == kBlockRows) return avx512::forward_block<kComplex, kBlockRows>(a, b, s, c, k0, out);
  for (int64_t q = 0; q < rows; ++q) avx512::forward_block<kComplex, 1>(a, b, s, c, k0 + q, out);
#else
  for (int64_t q = 0; q < rows; ++q) forward_row<kComplex>(a, b, s, c, k0 + q, out);
#endif
}

int64_t blocks_per_chunk(const PairShape& s) { return (s.k + kBlockRows - 1) / kBlockRows; }

template <bool kComplex>
void forward_kernel(RowBlock a, RowBlock b, float* out, const PairShape& s) {
  const int64_t blocks = blocks_per_chunk(s);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t c = 0; c < s.chunks; ++c)
    for (int64_t block = 0; block < blocks; ++block) forward_block<kComplex>(a, b, s, c, block * kBlockRows, out);
}

// d dist / d a = sum_n g * (a - b) / |a - b| (per element; 0 where equal),
// and minus that summed over k for b. Each (c, k) row of ga belongs to one
// iteration; gb rows are shared, so with several threads each sums into a
// dense copy of its own ([chunks * n, d] per part) that is added at the end.
template <bool kComplex>
void backward_rows(RowBlock a, RowBlock b, const float* grad, const PairShape& s, GradBlock ga, GradBlock gb,
                   int64_t c, int64_t k) {
  const int64_t d = s.d;
  const int64_t arow = (c * s.k + k) * a.stride, garow = (c * s.k + k) * ga.stride;
  const float* ar = a.re + arow;
  float* gr = ga.re + garow;
  const float* g = grad + (c * s.k + k) * s.n;
  for (int64_t n = 0; n < s.n; ++n) {
    const float w = g[n];
    if (w == 0) continue;
    const float* br = b.re + (c * s.n + n) * b.stride;
    float* lr = gb.re + (c * s.n + n) * gb.stride;
    if constexpr (kComplex) {
      const float* ai = a.im + arow;
      const float* bi = b.im + (c * s.n + n) * b.stride;
      float* gi = ga.im + garow;
      float* li = gb.im + (c * s.n + n) * gb.stride;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        const float x = ar[j] - br[j], y = ai[j] - bi[j];
        const float m = std::sqrt(x * x + y * y);
        // Where the difference is 0, x = y = 0 and the guard only keeps
        // the scale finite; no branch, so the loop vectorises.
        const float scale = w / std::max(m, 1e-30f);
        gr[j] += x * scale;
        gi[j] += y * scale;
        lr[j] -= x * scale;
        li[j] -= y * scale;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        const float x = ar[j] - br[j];
        const float sign = x > 0 ? w : (x < 0 ? -w : 0.f);
        gr[j] += sign;
        lr[j] -= sign;
      }
    }
  }
}

template <bool kComplex>
void backward_block(RowBlock a, RowBlock b, const float* grad, const PairShape& s, GradBlock ga, GradBlock gb,
                    int64_t c, int64_t k0) {
  const int64_t rows = std::min<int64_t>(kBlockRows, s.k - k0);
#if defined(__AVX512F__)
  if (rows == kBlockRows) return avx512::backward_block<kComplex, kBlockRows>(a, b, grad, s, ga, gb, c, k0);
  for (int64_t q = 0; q < rows; ++q) avx512::backward_block<kComplex, 1>(a, b, grad, s, ga, gb, c, k0 + q);
#else
  for (int64_t q = 0; q < rows; ++q) backward_rows<kComplex>(a, b, grad, s, ga, gb, c, k0 + q);
#endif
}

template <bool kComplex>
void backward_kernel(RowBlock a, RowBlock b, const float* grad, const PairShape& s, GradBlock ga, GradBlock gb) {
  const int64_t blocks = blocks_per_chunk(s);
  if (omp_get_max_threads() == 1 || omp_in_parallel()) {
    for (int64_t c = 0; c < s.chunks; ++c)
      for (int64_t block = 0; block < blocks; ++block)
        backward_block<kComplex>(a, b, grad, s, ga, gb, c, block * kBlockRows);
    return;
  }
  const int64_t b_rows = s.chunks * s.n, d = s.d;
#pragma omp parallel
  {
    std::vector<float> local_re(b_rows * d, 0.f), local_im(kComplex ? b_rows * d : 0, 0.f);
    const GradBlock local{local_re.data(), kComplex ? local_im.data() : nullptr, d};
#pragma omp for collapse(2) schedule(static)
    for (int64_t c = 0; c < s.chunks; ++c)
      for (int64_t block = 0; block < blocks; ++block)
        backward_block<kComplex>(a, b, grad, s, ga, local, c, block * kBlockRows);
#pragma omp critical
    for (int64_t r = 0; r < b_rows; ++r)
      for (int64_t j = 0; j < d; ++j) {
        gb.re[r * gb.stride + j] += local_re[r * d + j];
        if constexpr (kComplex) gb.im[r * gb.stride + j] += local_im[r * d + j];
      }
  }
}

PairShape check_shapes(const Tensor& a, const Tensor& b) {
  if (a.dim() != 3 || b.dim() != 3 || a.size(0) != b.size(0) || a.size(2) != b.size(2))
    fail("pairwise distance: expected [C, K, D] and [C, N, D], got {}-d and {}-d tensors of mismatched sizes", a.dim(),
         b.dim());
  return {a.size(0), a.size(1), b.size(1), a.size(2)};
}

RowBlock rows(const Tensor& re, const Tensor* im = nullptr) {
  return {re.data_ptr<float>(), im ? im->data_ptr<float>() : nullptr, re.size(-1)};
}
GradBlock grads(Tensor& re, Tensor* im = nullptr) {
  return {re.data_ptr<float>(), im ? im->data_ptr<float>() : nullptr, re.size(-1)};
}

class PairwiseL1 : public torch::autograd::Function<PairwiseL1> {
 public:
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
    a = a.contiguous();
    b = b.contiguous();
    const PairShape s = check_shapes(a, b);
    Tensor out = torch::empty({s.chunks, s.k, s.n}, a.options());
    l1_distances(rows(a), rows(b), s, out.data_ptr<float>());
    ctx->save_for_backward({a, b});
    return out;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &a = saved[0], &b = saved[1];
    const Tensor g = grad_out[0].contiguous();
    Tensor ga = torch::zeros_like(a), gb = torch::zeros_like(b);
    l1_distances_backward(rows(a), rows(b), g.data_ptr<float>(), check_shapes(a, b), grads(ga), grads(gb));
    return {ga, gb};
  }
};

class PairwiseComplexL1 : public torch::autograd::Function<PairwiseComplexL1> {
 public:
  static Tensor forward(AutogradContext* ctx, Tensor ar, Tensor ai, Tensor br, Tensor bi) {
    ar = ar.contiguous();
    ai = ai.contiguous();
    br = br.contiguous();
    bi = bi.contiguous();
    const PairShape s = check_shapes(ar, br);
    Tensor out = torch::empty({s.chunks, s.k, s.n}, ar.options());
    l1_distances(rows(ar, &ai), rows(br, &bi), s, out.data_ptr<float>());
    ctx->save_for_backward({ar, ai, br, bi});
    return out;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const Tensor g = grad_out[0].contiguous();
    Tensor gar = torch::zeros_like(saved[0]), gai = torch::zeros_like(saved[1]);
    Tensor gbr = torch::zeros_like(saved[2]), gbi = torch::zeros_like(saved[3]);
    l1_distances_backward(rows(saved[0], &saved[1]), rows(saved[2], &saved[3]), g.data_ptr<float>(),
                          check_shapes(saved[0], saved[2]), grads(gar, &gai), grads(gbr, &gbi));
    return {gar, gai, gbr, gbi};
  }
};

}  // namespace

void l1_distances(RowBlock a, RowBlock b, const PairShape& shape, float* out) {
  if (a.im) forward_kernel<true>(a, b, out, shape);
  else forward_kernel<false>(a, b, out, shape);
}

void l1_distances_backward(RowBlock a, RowBlock b, const float* grad, const PairShape& shape, GradBlock ga,
                           GradBlock gb) {
  if (a.im) backward_kernel<true>(a, b, grad, shape, ga, gb);
  else backward_kernel<false>(a, b, grad, shape, ga, gb);
}

Tensor pairwise_l1(const Tensor& a, const Tensor& b) { return PairwiseL1::apply(a, b); }

Tensor pairwise_complex_l1(const Tensor& a_re, const Tensor& a_im, const Tensor& b_re, const Tensor& b_im) {
  return PairwiseComplexL1::apply(a_re, a_im, b_re, b_im);
}

}  // namespace tessera::kge
