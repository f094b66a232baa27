#include "tessera/nn/fused_sage_conv.h"

#include <torch/autograd.h>

#include <c10/util/Exception.h>

#include "tessera/base/error.h"
#include "nn/csr_kernels.h"
#include "nn/gemm.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr const char* kOp = "fused_sage_conv";

// Empty tensors may have null data; the kernels and the BLAS never read it then.
float* data_or_null(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

void check_weight(const char* what, const torch::Tensor& w, int64_t rows, int64_t cols) {
  if (w.scalar_type() != torch::kFloat32) fail("{}: {} must be float32, got {}", kOp, what, c10::toString(w.scalar_type()));
  if (!w.device().is_cpu()) fail("{}: {} must be on the CPU", kOp, what);
  const bool vector = cols < 0;
  if (vector ? (w.dim() != 1 || w.size(0) != rows) : (w.dim() != 2 || w.size(0) != rows || w.size(1) != cols))
    fail("{}: {} has shape {}, expected [{}{}]", kOp, what, c10::str(w.sizes()), rows,
         vector ? "" : ", " + std::to_string(cols));
}

// Adds bias to each of the n rows of y (out floats each).
void add_bias(float* y, const float* bias, int64_t n, int64_t out) {
  for (int64_t i = 0; i < n; ++i) {
    float* row = y + i * out;
#pragma omp simd
    for (int64_t j = 0; j < out; ++j) row[j] += bias[j];
  }
}

// Column sums of g [n x out]: the bias's gradient.
void column_sums(const float* g, int64_t n, int64_t out, float* sums) {
  std::fill(sums, sums + out, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = g + i * out;
#pragma omp simd
    for (int64_t j = 0; j < out; ++j) sums[j] += row[j];
  }
}

class FusedSageConvFunction : public torch::autograd::Function<FusedSageConvFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& indptr,
                               const torch::Tensor& indices, int64_t num_dst,
                               const c10::optional<torch::Tensor>& w_self_arg, const torch::Tensor& w_neigh,
                               const c10::optional<torch::Tensor>& bias_arg, CsrReduce reduce, bool linear_first) {
    const torch::Tensor w_self = w_self_arg.value_or(torch::Tensor()), bias = bias_arg.value_or(torch::Tensor());
    const int64_t num_src = x.size(0), in = x.size(1), out = w_neigh.size(0);
    const int64_t* ptr = indptr.data_ptr<int64_t>();
    const int64_t* idx = indices.data_ptr<int64_t>();
    const float* xs = data_or_null(x);
    torch::Tensor y = torch::empty({num_dst, out}, x.options());
    float* ys = data_or_null(y);
    // Aggregated first: the aggregation, which the weight's gradient reads again.
    torch::Tensor agg;
    if (linear_first) {
      torch::Tensor projected = torch::empty({num_src, out}, x.options());
      detail::gemm(false, true, num_src, out, in, 1.0f, xs, in, w_neigh.data_ptr<float>(), in, 0.0f,
                   data_or_null(projected), out);
      if (num_dst > 0) detail::gather_rows(data_or_null(projected), ptr, idx, num_dst, out, reduce, ys);
    } else {
      agg = torch::empty({num_dst, in}, x.options());
      if (num_dst > 0) detail::gather_rows(xs, ptr, idx, num_dst, in, reduce, data_or_null(agg));
      detail::gemm(false, true, num_dst, out, in, 1.0f, data_or_null(agg), in, w_neigh.data_ptr<float>(), in, 0.0f,
                   ys, out);
    }
    if (w_self.defined())
      detail::gemm(false, true, num_dst, out, in, 1.0f, xs, in, w_self.data_ptr<float>(), in, 1.0f, ys, out);
    if (bias.defined()) add_bias(ys, bias.data_ptr<float>(), num_dst, out);

    ctx->save_for_backward({x, indptr, indices, w_self, w_neigh, agg});
    ctx->saved_data["reduce"] = static_cast<int64_t>(reduce);
    ctx->saved_data["linear_first"] = linear_first;
    ctx->saved_data["has_bias"] = bias.defined();
    return y;
  }

  // Gradients of out = x_dst Ws^T + A x Wn^T + b, with A the block's
  // (scaled) adjacency: dWs = g^T x_dst, db = column sums of g,
  // dWn = g^T (A x) = (A^T g)^T x, dx = A^T (g Wn) + [g Ws; 0].
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &indptr = saved[1], &indices = saved[2], &w_self = saved[3],
                        &w_neigh = saved[4], &agg = saved[5];
    const auto reduce = static_cast<CsrReduce>(ctx->saved_data["reduce"].toInt());
    const bool linear_first = ctx->saved_data["linear_first"].toBool();
    const torch::Tensor g = grad_outputs[0].contiguous();
    const int64_t num_src = x.size(0), in = x.size(1), num_dst = g.size(0), out = g.size(1);
    const int64_t* ptr = indptr.data_ptr<int64_t>();
    const int64_t* idx = indices.data_ptr<int64_t>();
    const float* xs = data_or_null(x);
    const float* gs = data_or_null(g);
    // needs_input_grad counts tensor arguments only, and absent optionals not
    // at all: x, indptr, indices, [w_self], w_neigh, [bias].
    int64_t edge = 3;
    const bool x_grad = ctx->needs_input_grad(0);
    const bool self_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool neigh_grad = ctx->needs_input_grad(edge++);
    const bool bias_grad = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(edge);

    variable_list grads(9);  // one per forward argument, tensor or not
    if (self_grad) {
      grads[4] = torch::empty({out, in}, x.options());
      detail::gemm(true, false, out, in, num_dst, 1.0f, gs, out, xs, in, 0.0f, data_or_null(grads[4]), in);
    }
    if (bias_grad) {
      grads[6] = torch::empty({out}, x.options());
      column_sums(gs, num_dst, out, data_or_null(grads[6]));
    }
    if (linear_first) {
      // A^T g serves both the weight's gradient and the input's.
      torch::Tensor scattered;
      if (neigh_grad || x_grad) {
        scattered = torch::empty({num_src, out}, x.options());
        if (num_src > 0) detail::scatter_rows(gs, ptr, idx, num_dst, num_src, out, reduce, data_or_null(scattered));
      }
      if (neigh_grad) {
        grads[5] = torch::empty({out, in}, x.options());
        detail::gemm(true, false, out, in, num_src, 1.0f, data_or_null(scattered), out, xs, in, 0.0f,
                     data_or_null(grads[5]), in);
      }
      if (x_grad) {
        grads[0] = torch::empty({num_src, in}, x.options());
        detail::gemm(false, false, num_src, in, out, 1.0f, data_or_null(scattered), out, w_neigh.data_ptr<float>(),
                     in, 0.0f, data_or_null(grads[0]), in);
      }
    } else {
      if (neigh_grad) {
        grads[5] = torch::empty({out, in}, x.options());
        detail::gemm(true, false, out, in, num_dst, 1.0f, gs, out, data_or_null(agg), in, 0.0f,
                     data_or_null(grads[5]), in);
      }
      if (x_grad) {
        torch::Tensor projected = torch::empty({num_dst, in}, x.options());
        detail::gemm(false, false, num_dst, in, out, 1.0f, gs, out, w_neigh.data_ptr<float>(), in, 0.0f,
                     data_or_null(projected), in);
        grads[0] = torch::empty({num_src, in}, x.options());
        if (num_src > 0)
          detail::scatter_rows(data_or_null(projected), ptr, idx, num_dst, num_src, in, reduce,
                               data_or_null(grads[0]));
      }
    }
    // The destinations' own term: their rows of dx gain g Ws.
    if (x_grad && w_self.defined())
      detail::gemm(false, false, num_dst, in, out, 1.0f, gs, out, w_self.data_ptr<float>(), in, 1.0f,
                   data_or_null(grads[0]), in);
    return grads;
  }
};

// g_y = out > 0 ? g * scale : 0 (relu and dropout's backward through the
// layer's output) and, when sums is not null, g_y's column sums (the bias's
// gradient), in one pass over g.
void unmask_gradient(const float* g, const float* out, int64_t n, int64_t width, float scale, float* g_y,
                     float* sums) {
  if (sums != nullptr) std::fill(sums, sums + width, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float *gr = g + i * width, *o = out + i * width;
    float* r = g_y + i * width;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) r[j] = o[j] > 0.0f ? gr[j] * scale : 0.0f;
    if (sums != nullptr) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) sums[j] += r[j];
    }
  }
}

// The layer on rows aggregated beforehand: two GEMMs into one output, and
// back. Arguments in this order so that the optional ones come last among
// the tensors (needs_input_grad counts only those present).
class SageAggregatedFunction : public torch::autograd::Function<SageAggregatedFunction> {
 public:
  // then_p < 0: the layer alone; otherwise relu, then dropout with that p
  // when then_training, applied to the output in place.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& aggregated, const torch::Tensor& w_neigh,
                               const c10::optional<torch::Tensor>& x_dst_arg,
                               const c10::optional<torch::Tensor>& w_self_arg,
                               const c10::optional<torch::Tensor>& bias_arg, double then_p, bool then_training) {
    const torch::Tensor x_dst = x_dst_arg.value_or(torch::Tensor()), w_self = w_self_arg.value_or(torch::Tensor()),
                        bias = bias_arg.value_or(torch::Tensor());
    const int64_t n = aggregated.size(0), in = aggregated.size(1), out = w_neigh.size(0);
    torch::Tensor y = torch::empty({n, out}, aggregated.options());
    detail::gemm(false, true, n, out, in, 1.0f, data_or_null(aggregated), in, w_neigh.data_ptr<float>(), in, 0.0f,
                 data_or_null(y), out);
    if (w_self.defined())
      detail::gemm(false, true, n, out, in, 1.0f, data_or_null(x_dst), in, w_self.data_ptr<float>(), in, 1.0f,
                   data_or_null(y), out);
    if (bias.defined()) add_bias(data_or_null(y), bias.data_ptr<float>(), n, out);
    const bool activated = then_p >= 0;
    if (activated) {
      // As relu_dropout(y, p, training) would, from the same generator draw.
      const auto draw = then_training && then_p > 0 ? detail::DropoutDraw::from_generator(then_p)
                                                    : detail::DropoutDraw::relu_only();
      if (y.numel() > 0) detail::relu_dropout_forward(data_or_null(y), y.numel(), draw, data_or_null(y));
      ctx->saved_data["scale"] = static_cast<double>(draw.scale);
    }
    ctx->save_for_backward({aggregated, w_neigh, x_dst, w_self, activated ? y : torch::Tensor()});
    ctx->saved_data["has_bias"] = bias.defined();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &aggregated = saved[0], &w_neigh = saved[1], &x_dst = saved[2], &w_self = saved[3],
                        &activated_out = saved[4];
    torch::Tensor g = grad_outputs[0].contiguous();
    const int64_t n = g.size(0), out = g.size(1), in = aggregated.size(1);
    int64_t edge = 2;
    const bool agg_grad = ctx->needs_input_grad(0), neigh_grad = ctx->needs_input_grad(1);
    const bool x_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool self_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool bias_grad = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(edge);
    variable_list grads(7);  // one per forward argument, tensor or not
    if (activated_out.defined()) {
      // Back through relu and dropout first; the bias's gradient comes in the same pass.
      torch::Tensor g_y = torch::empty_like(g);
      if (bias_grad) grads[4] = torch::empty({out}, g.options());
      unmask_gradient(data_or_null(g), data_or_null(activated_out), n, out,
                      static_cast<float>(ctx->saved_data["scale"].toDouble()), data_or_null(g_y),
                      bias_grad ? data_or_null(grads[4]) : nullptr);
      g = std::move(g_y);
    }
    const float* gs = data_or_null(g);
    // Weight gradients g^T rows; input gradients g W.
    auto weight_grad = [&](const torch::Tensor& rows) {
      torch::Tensor dw = torch::empty({out, in}, g.options());
      detail::gemm(true, false, out, in, n, 1.0f, gs, out, data_or_null(rows), in, 0.0f, data_or_null(dw), in);
      return dw;
    };
    auto input_grad = [&](const torch::Tensor& w) {
      torch::Tensor dx = torch::empty({n, in}, g.options());
      detail::gemm(false, false, n, in, out, 1.0f, gs, out, w.data_ptr<float>(), in, 0.0f, data_or_null(dx), in);
      return dx;
    };
    if (agg_grad) grads[0] = input_grad(w_neigh);
    if (neigh_grad) grads[1] = weight_grad(aggregated);
    if (x_grad) grads[2] = input_grad(w_self);
    if (self_grad) grads[3] = weight_grad(x_dst);
    if (bias_grad && !activated_out.defined()) {
      grads[4] = torch::empty({out}, g.options());
      column_sums(gs, n, out, data_or_null(grads[4]));
    }
    return grads;
  }
};

void check_rows(const char* what, const torch::Tensor& t) {
  if (!t.defined()) fail("{}: {} is undefined", kOp, what);
  if (t.dim() != 2) fail("{}: {} must be 2-D, got {}-D", kOp, what, t.dim());
  if (t.scalar_type() != torch::kFloat32) fail("{}: {} must be float32, got {}", kOp, what, c10::toString(t.scalar_type()));
  if (!t.device().is_cpu()) fail("{}: {} must be on the CPU", kOp, what);
}

// Optional, not undefined, tensors: autograd's apply() wants a device for
// every Tensor argument.
c10::optional<torch::Tensor> optional(const torch::Tensor& t) {
  return t.defined() ? c10::optional<torch::Tensor>(t.contiguous()) : c10::nullopt;
}

void check_weights(const torch::Tensor& w_self, const torch::Tensor& w_neigh, const torch::Tensor& bias, int64_t in) {
  if (!w_neigh.defined()) fail("{}: w_neigh is undefined", kOp);
  if (w_neigh.dim() != 2) fail("{}: w_neigh must be 2-D [out, in], got shape {}", kOp, c10::str(w_neigh.sizes()));
  const int64_t out = w_neigh.size(0);
  check_weight("w_neigh", w_neigh, out, in);
  if (w_self.defined()) check_weight("w_self", w_self, out, in);
  if (bias.defined()) check_weight("bias", bias, out, -1);
}

}  // namespace

torch::Tensor fused_sage_conv_aggregated(const torch::Tensor& x_dst, const torch::Tensor& aggregated,
                                         const torch::Tensor& w_self, const torch::Tensor& w_neigh,
                                         const torch::Tensor& bias, const std::optional<ReluDropout>& then) {
  if (then && !(then->p >= 0.0 && then->p < 1.0)) fail("{}: dropout p must be in [0, 1), got {}", kOp, then->p);
  check_rows("aggregated", aggregated);
  check_weights(w_self, w_neigh, bias, aggregated.size(1));
  if (w_self.defined()) {
    check_rows("x_dst", x_dst);
    if (x_dst.sizes() != aggregated.sizes())
      fail("{}: x_dst has shape {} but aggregated {}", kOp, c10::str(x_dst.sizes()), c10::str(aggregated.sizes()));
  }
  return SageAggregatedFunction::apply(aggregated.contiguous(), w_neigh.contiguous(),
                                       w_self.defined() ? optional(x_dst) : c10::nullopt, optional(w_self),
                                       optional(bias), then ? then->p : -1.0, then && then->training);
}

torch::Tensor fused_sage_conv(const torch::Tensor& x_src, const torch::Tensor& indptr, const torch::Tensor& indices,
                              int64_t num_dst, const torch::Tensor& w_self, const torch::Tensor& w_neigh,
                              const torch::Tensor& bias, CsrReduce reduce, bool linear_first) {
  if (!x_src.defined()) fail("{}: x_src is undefined", kOp);
  if (x_src.dim() != 2) fail("{}: x_src must be 2-D [num_src, in], got {}-D", kOp, x_src.dim());
  if (x_src.scalar_type() != torch::kFloat32)
    fail("{}: x_src must be float32, got {}", kOp, c10::toString(x_src.scalar_type()));
  if (!x_src.device().is_cpu()) fail("{}: x_src must be on the CPU", kOp);
  const int64_t num_src = x_src.size(0), in = x_src.size(1);
  if (num_dst < 0 || num_dst > num_src)
    fail("{}: {} destinations but {} source rows (destinations are the first sources)", kOp, num_dst, num_src);
  detail::check_index_tensor(kOp, "indptr", indptr);
  detail::check_index_tensor(kOp, "indices", indices);
  if (indptr.size(0) != num_dst + 1)
    fail("{}: indptr has {} entries, expected {} for {} destinations", kOp, indptr.size(0), num_dst + 1, num_dst);
  check_weights(w_self, w_neigh, bias, in);
  const torch::Tensor xc = x_src.contiguous(), ptr = indptr.contiguous(), idx = indices.contiguous();
  detail::check_block(kOp, num_src, ptr, idx, reduce);
  // Weights are small; contiguous() is a no-op for a module's parameters.
  return FusedSageConvFunction::apply(xc, ptr, idx, num_dst, optional(w_self), w_neigh.contiguous(), optional(bias),
                                      reduce, linear_first);
}

}  // namespace tessera::nn
