#include "distance_kernels.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

struct Shape {
  int64_t chunks, k, n, d;
};

Shape check_shapes(const Tensor& a, const Tensor& b) {
  if (a.dim() != 3 || b.dim() != 3 || a.size(0) != b.size(0) || a.size(2) != b.size(2))
    fail("pairwise distance: expected [C, K, D] and [C, N, D], got {}-d and {}-d tensors of mismatched sizes", a.dim(),
         b.dim());
  return {a.size(0), a.size(1), b.size(1), a.size(2)};
}

// Views of one or two (complex) parts of a row.
template <bool kComplex>
struct Rows {
  const float* re;
  const float* im;
};

template <bool kComplex>
void forward_kernel(Rows<kComplex> a, Rows<kComplex> b, float* out, const Shape& s) {
  const int64_t d = s.d;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t c = 0; c < s.chunks; ++c)
    for (int64_t k = 0; k < s.k; ++k) {
      const float* ar = a.re + (c * s.k + k) * d;
      const float* ai = kComplex ? a.im + (c * s.k + k) * d : nullptr;
      float* o = out + (c * s.k + k) * s.n;
      for (int64_t n = 0; n < s.n; ++n) {
        const float* br = b.re + (c * s.n + n) * d;
        float sum = 0;
        if constexpr (kComplex) {
          const float* bi = b.im + (c * s.n + n) * d;
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
}

// d dist / d a = sum_n g * (a - b) / |a - b| (per element; 0 where equal),
// and minus that summed over k for b. Each (c, k) row of grad_a belongs to
// one iteration; grad_b rows are shared, so threads sum into their own copy.
template <bool kComplex>
void backward_kernel(Rows<kComplex> a, Rows<kComplex> b, const float* grad, float* ga_re, float* ga_im, float* gb_re,
                     float* gb_im, const Shape& s) {
  const int64_t d = s.d;
  const int64_t b_elems = s.chunks * s.n * d;
#pragma omp parallel
  {
    std::vector<float> local_re(b_elems, 0.f), local_im(kComplex ? b_elems : 0, 0.f);
#pragma omp for collapse(2) schedule(static)
    for (int64_t c = 0; c < s.chunks; ++c)
      for (int64_t k = 0; k < s.k; ++k) {
        const int64_t row = (c * s.k + k) * d;
        const float* ar = a.re + row;
        float* gr = ga_re + row;
        const float* g = grad + (c * s.k + k) * s.n;
        for (int64_t n = 0; n < s.n; ++n) {
          const float w = g[n];
          if (w == 0) continue;
          const int64_t brow = (c * s.n + n) * d;
          const float* br = b.re + brow;
          float* lr = local_re.data() + brow;
          if constexpr (kComplex) {
            const float* ai = a.im + row;
            const float* bi = b.im + brow;
            float* gi = ga_im + row;
            float* li = local_im.data() + brow;
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
#pragma omp critical
    {
      for (int64_t i = 0; i < b_elems; ++i) gb_re[i] += local_re[i];
      if constexpr (kComplex)
        for (int64_t i = 0; i < b_elems; ++i) gb_im[i] += local_im[i];
    }
  }
}

class PairwiseL1 : public torch::autograd::Function<PairwiseL1> {
 public:
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
    a = a.contiguous();
    b = b.contiguous();
    const Shape s = check_shapes(a, b);
    Tensor out = torch::empty({s.chunks, s.k, s.n}, a.options());
    forward_kernel<false>({a.data_ptr<float>(), nullptr}, {b.data_ptr<float>(), nullptr}, out.data_ptr<float>(), s);
    ctx->save_for_backward({a, b});
    return out;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &a = saved[0], &b = saved[1];
    const Tensor g = grads[0].contiguous();
    const Shape s = check_shapes(a, b);
    Tensor ga = torch::zeros_like(a), gb = torch::zeros_like(b);
    backward_kernel<false>({a.data_ptr<float>(), nullptr}, {b.data_ptr<float>(), nullptr}, g.data_ptr<float>(),
                           ga.data_ptr<float>(), nullptr, gb.data_ptr<float>(), nullptr, s);
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
    const Shape s = check_shapes(ar, br);
    Tensor out = torch::empty({s.chunks, s.k, s.n}, ar.options());
    forward_kernel<true>({ar.data_ptr<float>(), ai.data_ptr<float>()}, {br.data_ptr<float>(), bi.data_ptr<float>()},
                         out.data_ptr<float>(), s);
    ctx->save_for_backward({ar, ai, br, bi});
    return out;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Tensor g = grads[0].contiguous();
    const Shape s = check_shapes(saved[0], saved[2]);
    Tensor gar = torch::zeros_like(saved[0]), gai = torch::zeros_like(saved[1]);
    Tensor gbr = torch::zeros_like(saved[2]), gbi = torch::zeros_like(saved[3]);
    backward_kernel<true>({saved[0].data_ptr<float>(), saved[1].data_ptr<float>()},
                          {saved[2].data_ptr<float>(), saved[3].data_ptr<float>()}, g.data_ptr<float>(),
                          gar.data_ptr<float>(), gai.data_ptr<float>(), gbr.data_ptr<float>(), gbi.data_ptr<float>(), s);
    return {gar, gai, gbr, gbi};
  }
};

}  // namespace

Tensor pairwise_l1(const Tensor& a, const Tensor& b) { return PairwiseL1::apply(a, b); }

Tensor pairwise_complex_l1(const Tensor& a_re, const Tensor& a_im, const Tensor& b_re, const Tensor& b_im) {
  return PairwiseComplexL1::apply(a_re, a_im, b_re, b_im);
}

}  // namespace tessera::kge
