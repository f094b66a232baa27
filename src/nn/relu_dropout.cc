#include "tessera/nn/relu_dropout.h"

#include <torch/autograd.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "tessera/base/error.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Below this many elements a kernel runs on one thread.
constexpr int64_t kParallelElements = 1 << 16;

// Elements [4i, 4i + 4) take their 16-bit draws from quad_draws(i), so a
// thread's share of the output does not depend on the other threads. Blocks
// of 64 elements: the draws first, then a branch-free select the compiler
// vectorises (a random keep/drop branch mispredicts every other element).
constexpr int64_t kBlock = 64;

}  // namespace

namespace detail {

DropoutDraw DropoutDraw::with_seed(uint64_t seed, double p) {
  DropoutDraw d;
  d.scale = static_cast<float>(1.0 / (1.0 - p));
  d.keep_below = static_cast<uint32_t>(std::lround((1.0 - p) * 65536.0));
  d.seed = seed;
  return d;
}

DropoutDraw DropoutDraw::from_generator(double p) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return with_seed(gen.get<at::CPUGeneratorImpl>()->random64(), p);
}

namespace {

// The 16-bit draws of elements [64b, 64b + 64), as every kernel here reads them.
inline void block_draws(const DropoutDraw& draw, int64_t b, uint16_t* draws) {
#if defined(__AVX2__)
  for (int64_t i = 0; i < kBlock / 4; i += 4)  // four quads (16 draws) a register, in memory order
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(draws + 4 * i),
                        quad_draws_x4(draw, static_cast<uint64_t>(b * (kBlock / 4) + i)));
#else
  for (int64_t i = 0; i < kBlock / 4; ++i) {
    const uint64_t bits = quad_draws(draw, static_cast<uint64_t>(b * (kBlock / 4) + i));
    std::memcpy(draws + 4 * i, &bits, sizeof bits);
  }
#endif
}

// v where keep is all ones, +0 where it is zero: a select as a bit mask, which vectorises (a float select on
// a data-dependent condition compiled to a branch on AVX2 with GCC 12, mispredicted on random masks: dropout
// over 30,000 x 256 took 52 ms, 6.9 with the mask).
inline float masked(float v, uint32_t keep) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= keep;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline uint32_t all_if(bool condition) { return 0u - static_cast<uint32_t>(condition); }

// out = x kept (and positive, with kRelu) ? x * scale : 0, block by block.
template <bool kRelu>
void masked_scale(const float* x, int64_t n, const DropoutDraw& draw, float* out) {
  const uint32_t keep_below = draw.keep_below;
  const float scale = draw.scale;
  if (keep_below >= (1u << 16)) {  // nothing dropped (relu_only): no draws to take
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (int64_t j = 0; j < n; ++j) out[j] = kRelu ? masked(x[j] * scale, all_if(x[j] > 0.0f)) : x[j] * scale;
    return;
  }
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelElements)
  for (int64_t b = 0; b < blocks; ++b) {
    uint16_t draws[kBlock];
    block_draws(draw, b, draws);
    const int64_t begin = b * kBlock, len = std::min(kBlock, n - begin);
    const float* xb = x + begin;
    float* ob = out + begin;
#pragma omp simd
    for (int64_t j = 0; j < len; ++j)
      ob[j] = masked(xb[j] * scale, all_if(draws[j] < keep_below) & (kRelu ? all_if(xb[j] > 0.0f) : ~0u));
  }
}

}  // namespace

void relu_dropout_forward(const float* x, int64_t n, const DropoutDraw& draw, float* out) {
  masked_scale<true>(x, n, draw, out);
}

void relu_dropout_backward(const float* g, const float* out, int64_t n, float scale, float* gx) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
  for (int64_t e = 0; e < n; ++e) gx[e] = masked(g[e] * scale, all_if(out[e] > 0.0f));
}

void dropout_forward(const float* x, int64_t n, const DropoutDraw& draw, float* out) {
  masked_scale<false>(x, n, draw, out);
}

void dropout_backward(const float* g, int64_t n, const DropoutDraw& draw, float* gx) {
  masked_scale<false>(g, n, draw, gx);  // the same draws keep the same elements
}

}  // namespace detail

namespace {

// kernel(x) under `draw` into a fresh tensor.
using DrawKernel = void (*)(const float*, int64_t, const detail::DropoutDraw&, float*);
torch::Tensor apply_draw(DrawKernel kernel, const torch::Tensor& x, const detail::DropoutDraw& draw) {
  torch::Tensor out = torch::empty_like(x);
  if (x.numel() > 0) kernel(x.data_ptr<float>(), x.numel(), draw, out.data_ptr<float>());
  return out;
}

class ReluDropoutFunction : public torch::autograd::Function<ReluDropoutFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    const detail::DropoutDraw draw = detail::DropoutDraw::from_generator(p);
    torch::Tensor out = apply_draw(detail::relu_dropout_forward, x, draw);
    ctx->saved_data["scale"] = static_cast<double>(draw.scale);
    ctx->save_for_backward({out});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor out = ctx->get_saved_variables()[0];
    const torch::Tensor g = grad_outputs[0].contiguous();
    torch::Tensor gx = torch::empty_like(out);
    if (out.numel() > 0)
      detail::relu_dropout_backward(g.data_ptr<float>(), out.data_ptr<float>(), out.numel(),
                                    static_cast<float>(ctx->saved_data["scale"].toDouble()), gx.data_ptr<float>());
    return {gx, torch::Tensor()};
  }
};

// Dropout alone: no mask is kept, the backward draws the forward's again from its seed.
class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    const detail::DropoutDraw draw = detail::DropoutDraw::from_generator(p);
    ctx->saved_data["seed"] = static_cast<int64_t>(draw.seed);
    ctx->saved_data["p"] = p;
    return apply_draw(detail::dropout_forward, x, draw);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor g = grad_outputs[0].contiguous();
    const detail::DropoutDraw draw = detail::DropoutDraw::with_seed(
        static_cast<uint64_t>(ctx->saved_data["seed"].toInt()), ctx->saved_data["p"].toDouble());
    return {apply_draw(detail::dropout_backward, g, draw), torch::Tensor()};
  }
};

void check_input(const char* op, const torch::Tensor& x, double p) {
  if (!x.defined()) fail("{}: x is undefined", op);
  if (!(p >= 0.0 && p < 1.0)) fail("{}: p must be in [0, 1), got {}", op, p);
}

void check_kernel_input(const char* op, const torch::Tensor& x) {
  if (x.scalar_type() != torch::kFloat32) fail("{}: x must be float32, got {}", op, c10::toString(x.scalar_type()));
  if (!x.device().is_cpu()) fail("{}: x must be on the CPU", op);
}

}  // namespace

torch::Tensor elementwise_dropout(const torch::Tensor& x, double p, bool training) {
  check_input("elementwise_dropout", x, p);
  if (!training || p == 0.0) return x;
  check_kernel_input("elementwise_dropout", x);
  return DropoutFunction::apply(x.contiguous(), p);
}

torch::Tensor relu_dropout(const torch::Tensor& x, double p, bool training) {
  check_input("relu_dropout", x, p);
  if (!training || p == 0.0) return torch::relu(x);
  check_kernel_input("relu_dropout", x);
  return ReluDropoutFunction::apply(x.contiguous(), p);
}

}  // namespace tessera::nn
