#include "tessera/nn/fused_sage_conv.h"

#include <torch/autograd.h>

#include <c10/util/Exception.h>

#include "tessera/base/error.h"
#include "nn/csr_kernels.h"
#include "nn/relu_dropout_kernels.h"
#include "nn/sage_layer_kernels.h"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr const char* kOp = "fused_sage_conv";

// Empty tensors may have null data; the kernels and the BLAS never read it then.
float* data_or_null(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

detail::SageWeights weights(const torch::Tensor& w_self, const torch::Tensor& w_neigh, const torch::Tensor& bias) {
  return {data_or_null(w_self), data_or_null(w_neigh), data_or_null(bias)};
}

void check_weight(const char* what, const torch::Tensor& w, int64_t rows, int64_t cols) {
  if (w.scalar_type() != torch::kFloat32) fail("{}: {} must be float32, got {}", kOp, what, c10::toString(w.scalar_type()));
  if (!w.device().is_cpu()) fail("{}: {} must be on the CPU", kOp, what);
  const bool vector = cols < 0;
  if (vector ? (w.dim() != 1 || w.size(0) != rows) : (w.dim() != 2 || w.size(0) != rows || w.size(1) != cols))
    fail("{}: {} has shape {}, expected [{}{}]", kOp, what, c10::str(w.sizes()), rows,
         vector ? "" : ", " + std::to_string(cols));
}

class FusedSageConvFunction : public torch::autograd::Function<FusedSageConvFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& indptr,
                               const torch::Tensor& indices, int64_t num_dst,
                               const c10::optional<torch::Tensor>& w_self_arg, const torch::Tensor& w_neigh,
                               const c10::optional<torch::Tensor>& bias_arg, CsrReduce reduce, bool linear_first) {
    const torch::Tensor w_self = w_self_arg.value_or(torch::Tensor()), bias = bias_arg.value_or(torch::Tensor());
    const detail::SageBlock b = block_of(x, indptr, indices, num_dst, w_neigh.size(0), reduce, linear_first);
    torch::Tensor y = torch::empty({num_dst, b.out}, x.options());
    // Aggregated first, the scratch is the aggregation, which the weight's gradient reads again.
    torch::Tensor scratch = torch::empty({b.forward_scratch()}, x.options());
    detail::sage_block_forward(b, weights(w_self, w_neigh, bias), data_or_null(x), data_or_null(scratch),
                               data_or_null(y));
    ctx->save_for_backward({x, indptr, indices, w_self, w_neigh, linear_first ? torch::Tensor() : scratch});
    ctx->saved_data["reduce"] = static_cast<int64_t>(reduce);
    ctx->saved_data["linear_first"] = linear_first;
    ctx->saved_data["has_bias"] = bias.defined();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &indptr = saved[1], &indices = saved[2], &w_self = saved[3],
                        &w_neigh = saved[4], &agg = saved[5];
    const torch::Tensor g = grad_outputs[0].contiguous();
    const detail::SageBlock b = block_of(x, indptr, indices, g.size(0), g.size(1),
                                         static_cast<CsrReduce>(ctx->saved_data["reduce"].toInt()),
                                         ctx->saved_data["linear_first"].toBool());
    // needs_input_grad counts tensor arguments only, and absent optionals not
    // at all: x, indptr, indices, [w_self], w_neigh, [bias].
    int64_t edge = 3;
    const bool x_grad = ctx->needs_input_grad(0);
    const bool self_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool neigh_grad = ctx->needs_input_grad(edge++);
    const bool bias_grad = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(edge);

    variable_list grads(9);  // one per forward argument, tensor or not
    detail::SageGradients out;
    out.dx = x_grad ? data_or_null(grads[0] = torch::empty({b.num_src, b.in}, x.options())) : nullptr;
    out.dw_self = self_grad ? data_or_null(grads[4] = torch::empty({b.out, b.in}, x.options())) : nullptr;
    out.dw_neigh = neigh_grad ? data_or_null(grads[5] = torch::empty({b.out, b.in}, x.options())) : nullptr;
    out.db = bias_grad ? data_or_null(grads[6] = torch::empty({b.out}, x.options())) : nullptr;
    torch::Tensor scratch = torch::empty({b.backward_scratch()}, x.options());
    detail::sage_block_backward(b, weights(w_self, w_neigh, torch::Tensor()), data_or_null(x), data_or_null(agg),
                                data_or_null(g), data_or_null(scratch), out);
    return grads;
  }

 private:
  static detail::SageBlock block_of(const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                                    int64_t num_dst, int64_t out, CsrReduce reduce, bool linear_first) {
    detail::SageBlock b;
    b.indptr = indptr.data_ptr<int64_t>();
    b.indices = indices.data_ptr<int64_t>();
    b.num_src = x.size(0), b.num_dst = num_dst, b.in = x.size(1), b.out = out;
    b.reduce = reduce;
    b.linear_first = linear_first;
    return b;
  }
};

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
    const bool activated = then_p >= 0;
    // As relu_dropout(y, p, training) would, from the same generator draw.
    const auto draw = activated && then_training && then_p > 0 ? detail::DropoutDraw::from_generator(then_p)
                                                               : detail::DropoutDraw::relu_only();
    detail::sage_aggregated_forward(n, in, out, data_or_null(x_dst), data_or_null(aggregated),
                                    weights(w_self, w_neigh, bias), activated ? &draw : nullptr, data_or_null(y));
    ctx->saved_data["scale"] = static_cast<double>(draw.scale);
    ctx->save_for_backward({aggregated, w_neigh, x_dst, w_self, activated ? y : torch::Tensor()});
    ctx->saved_data["has_bias"] = bias.defined();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &aggregated = saved[0], &w_neigh = saved[1], &x_dst = saved[2], &w_self = saved[3],
                        &activated_out = saved[4];
    const torch::Tensor g = grad_outputs[0].contiguous();
    const int64_t n = g.size(0), out = g.size(1), in = aggregated.size(1);
    int64_t edge = 2;
    const bool agg_grad = ctx->needs_input_grad(0), neigh_grad = ctx->needs_input_grad(1);
    const bool x_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool self_grad = w_self.defined() && ctx->needs_input_grad(edge++);
    const bool bias_grad = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(edge);
    variable_list grads(7);  // one per forward argument, tensor or not
    auto grad = [&](bool wanted, size_t i, at::IntArrayRef shape) {
      return wanted ? data_or_null(grads[i] = torch::empty(shape, g.options())) : nullptr;
    };
    detail::SageGradients to;
    to.dx = grad(agg_grad, 0, {n, in});
    to.dw_neigh = grad(neigh_grad, 1, {out, in});
    to.dx_dst = grad(x_grad, 2, {n, in});
    to.dw_self = grad(self_grad, 3, {out, in});
    to.db = grad(bias_grad, 4, {out});
    torch::Tensor g_scratch = activated_out.defined() ? torch::empty_like(g) : torch::Tensor();
    detail::sage_aggregated_backward(n, in, out, data_or_null(x_dst), data_or_null(aggregated),
                                     weights(w_self, w_neigh, torch::Tensor()), data_or_null(g),
                                     data_or_null(activated_out),
                                     static_cast<float>(ctx->saved_data["scale"].toDouble()),
                                     data_or_null(g_scratch), to);
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
