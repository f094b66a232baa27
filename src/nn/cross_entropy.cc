#include "tessera/nn/cross_entropy.h"

#include <immintrin.h>
#include <sleef.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tessera/base/error.h"
#include "nn/cross_entropy_kernels.h"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kIgnoreIndex = -100;  // torch's default ignore_index

// x[i] = exp(x[i]) over a contiguous buffer, at the host's vector width
// (SLEEF, 1 ulp: the library libtorch's own CPU kernels use).
void exp_in_place(float* x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, Sleef_expf16_u10(_mm512_loadu_ps(x + i)));
#elif defined(__AVX2__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, Sleef_expf8_u10(_mm256_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) x[i] = Sleef_expf_u10(x[i]);
}

// A row's maximum and sum. With AVX-512 the row's tail is a masked load,
// so a row of 47 classes is three vector steps and one horizontal
// reduction; the generic loops leave a scalar tail and a lane-by-lane
// epilogue, each a chain of dependent adds or maxes.
#if defined(__AVX512F__)
inline __mmask16 tail_mask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1); }

float row_max(const float* row, int64_t c) {
  __m512 m = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t j = 0;
  for (; j + 16 <= c; j += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(row + j));
  if (j < c) m = _mm512_max_ps(m, _mm512_mask_loadu_ps(m, tail_mask(c - j), row + j));
  return _mm512_reduce_max_ps(m);
}

float row_sum(const float* row, int64_t c) {
  __m512 s = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= c; j += 16) s = _mm512_add_ps(s, _mm512_loadu_ps(row + j));
  if (j < c) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(tail_mask(c - j), row + j));
  return _mm512_reduce_add_ps(s);
}
#else
float row_max(const float* row, int64_t c) {
  float top = row[0];
#pragma omp simd reduction(max : top)
  for (int64_t j = 0; j < c; ++j) top = row[j] > top ? row[j] : top;
  return top;
}

float row_sum(const float* row, int64_t c) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < c; ++j) sum += row[j];
  return sum;
}
#endif

// The first index of the row's maximum, or c when no element equals it (a
// row of NaNs). A row holding a NaN has a NaN loss; whether it counts as
// correct may differ from torch's argmax, which points at the NaN.
int64_t first_argmax(const float* row, int64_t c, float top) {
  int64_t j = 0;
  while (j < c && row[j] != top) ++j;
  return j;
}

}  // namespace

namespace detail {

CrossEntropyResult softmax_cross_entropy(const float* x, const int64_t* labels, int64_t n, int64_t c, float* grad) {
  CrossEntropyResult r;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = labels[i];
    if (label == kIgnoreIndex) continue;
    if (label < 0 || label >= c)
      fail("cross_entropy: row {} has label {}, outside [0, {}) (and not the ignored -100)", i, label, c);
    ++counted;
  }
  // torch's mean over no rows is 0 / 0.
  const float inv_count = counted == 0 ? std::numeric_limits<float>::infinity() : 1.0f / static_cast<float>(counted);
  std::vector<float> shifted_storage;
  float* shifted = grad;  // x - max per row, then its exp: the gradient's numerator
  if (shifted == nullptr) {
    shifted_storage.resize(static_cast<size_t>(n * c));
    shifted = shifted_storage.data();
  }
  std::vector<float> row_max_of(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * c;
    const float m = row_max(row, c);
    if (labels[i] != kIgnoreIndex && first_argmax(row, c, m) == labels[i]) ++r.correct;
    row_max_of[i] = m;
    float* s = shifted + i * c;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) s[j] = row[j] - m;
  }
  exp_in_place(shifted, n * c);
  for (int64_t i = 0; i < n; ++i) {
    float* g = shifted + i * c;
    const int64_t label = labels[i];
    if (label == kIgnoreIndex) {
      for (int64_t j = 0; j < c; ++j) g[j] = 0.0f;
      continue;
    }
    const float sum = row_sum(g, c);
    // -log_softmax at the label: log(sum exp(x - max)) - (x_label - max).
    r.loss += static_cast<double>(std::log(sum) - (x[i * c + label] - row_max_of[i]));
    if (grad == nullptr) continue;
    const float scale = inv_count / sum;
#pragma omp simd
    for (int64_t j = 0; j < c; ++j) g[j] *= scale;
    g[label] -= inv_count;
  }
  r.loss = counted == 0 ? std::numeric_limits<double>::quiet_NaN() : r.loss / static_cast<double>(counted);
  return r;
}

}  // namespace detail

namespace {

class CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits, const torch::Tensor& labels,
                               bool needs_grad, int64_t* correct) {
    const int64_t n = logits.size(0), c = logits.size(1);
    torch::Tensor grad = needs_grad ? torch::empty({n, c}, logits.options()) : torch::Tensor();
    const detail::CrossEntropyResult r = detail::softmax_cross_entropy(logits.data_ptr<float>(), labels.data_ptr<int64_t>(), n, c,
                                           needs_grad ? grad.data_ptr<float>() : nullptr);
    if (correct != nullptr) *correct = r.correct;
    if (needs_grad) ctx->saved_data["grad"] = grad;
    return torch::full({}, static_cast<float>(r.loss), logits.options());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    variable_list grads(4);  // logits, labels, needs_grad, correct
    const torch::Tensor grad = ctx->saved_data["grad"].toTensor();
    const torch::Tensor& upstream = grad_outputs[0];
    // The loss is usually the root (upstream 1): hand the saved gradient on as it is.
    grads[0] = upstream.item<float>() == 1.0f ? grad : grad * upstream;
    return grads;
  }
};

bool fusable(const torch::Tensor& logits, const torch::Tensor& labels) {
  return logits.defined() && labels.defined() && logits.dim() == 2 && logits.scalar_type() == torch::kFloat32 &&
         logits.device().is_cpu() && logits.layout() == torch::kStrided && labels.dim() == 1 &&
         labels.scalar_type() == torch::kInt64 && labels.device().is_cpu() && labels.size(0) == logits.size(0) &&
         logits.size(1) > 0;
}

}  // namespace

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& labels, int64_t* correct) {
  if (!fusable(logits, labels)) {
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, labels);
    if (correct != nullptr) *correct = logits.argmax(1).eq(labels).sum().item<int64_t>();
    return loss;
  }
  // Inside the node's forward autograd is off; whether a gradient will be
  // asked for is known here.
  const bool needs_grad = logits.requires_grad() && torch::GradMode::is_enabled();
  return CrossEntropyFunction::apply(logits.contiguous(), labels.contiguous(), needs_grad, correct);
}

}  // namespace tessera::nn
