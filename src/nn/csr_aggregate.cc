#include "tessera/nn/csr_aggregate.h"

#include <torch/autograd.h>

#include "tessera/base/error.h"
#include "nn/csr_kernels.h"

namespace tessera::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const char* op_name(CsrReduce reduce) {
  switch (reduce) {
    case CsrReduce::kSum: return "csr_sum";
    case CsrReduce::kMean: return "csr_mean";
    case CsrReduce::kGcnMean: return "csr_gcn_mean";
  }
  return "csr_aggregate";
}

class CsrAggregateFunction : public torch::autograd::Function<CsrAggregateFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& indptr,
                               const torch::Tensor& indices, CsrReduce reduce) {
    ctx->save_for_backward({indptr, indices});
    ctx->saved_data["reduce"] = static_cast<int64_t>(reduce);
    ctx->saved_data["num_src"] = x.size(0);
    const int64_t num_dst = indptr.size(0) - 1;
    torch::Tensor out = torch::empty({num_dst, x.size(1)}, x.options());
    // Empty tensors may have null data, which memcpy must not see.
    if (out.numel() == 0) return out;
    detail::gather_rows(x.data_ptr<float>(), indptr.data_ptr<int64_t>(), indices.data_ptr<int64_t>(), num_dst,
                   x.size(1), reduce, out.data_ptr<float>());
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // One entry per forward argument; only x has a gradient.
    variable_list grads(4);
    if (!ctx->needs_input_grad(0)) return grads;
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& indptr = saved[0];
    const torch::Tensor& indices = saved[1];
    const auto reduce = static_cast<CsrReduce>(ctx->saved_data["reduce"].toInt());
    const int64_t num_src = ctx->saved_data["num_src"].toInt();
    const torch::Tensor g = grad_outputs[0].contiguous();
    const int64_t num_dst = indptr.size(0) - 1;
    if (g.numel() == 0 || num_src == 0) {  // null data, which memset must not see; and nothing to add
      grads[0] = torch::zeros({num_src, g.size(1)}, g.options());
      return grads;
    }
    torch::Tensor gx = torch::empty({num_src, g.size(1)}, g.options());
    detail::scatter_rows(g.data_ptr<float>(), indptr.data_ptr<int64_t>(), indices.data_ptr<int64_t>(), num_dst, num_src,
                    g.size(1), reduce, gx.data_ptr<float>());
    grads[0] = gx;
    return grads;
  }
};

}  // namespace

torch::Tensor csr_aggregate(const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                            CsrReduce reduce) {
  const char* op = op_name(reduce);
  if (!x.defined()) fail("{}: x is undefined", op);
  if (x.dim() != 2) fail("{}: x must be 2-D [num_src, f], got {}-D", op, x.dim());
  if (x.scalar_type() != torch::kFloat32) fail("{}: x must be float32, got {}", op, c10::toString(x.scalar_type()));
  if (!x.device().is_cpu()) fail("{}: x must be on the CPU", op);
  detail::check_index_tensor(op, "indptr", indptr);
  detail::check_index_tensor(op, "indices", indices);
  // No-ops for the contiguous tensors callers normally pass.
  const torch::Tensor xc = x.contiguous(), ptr = indptr.contiguous(), idx = indices.contiguous();
  detail::check_block(op, xc.size(0), ptr, idx, reduce);
  return CsrAggregateFunction::apply(xc, ptr, idx, reduce);
}

}  // namespace tessera::nn
