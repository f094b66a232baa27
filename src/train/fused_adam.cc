#include "tessera/train/fused_adam.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>

namespace tessera::train {
namespace {

using torch::optim::AdamOptions;
using torch::optim::AdamParamState;

bool fusable_tensor(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous() &&
         t.layout() == torch::kStrided;
}

// Adam's update of n floats, in the order and precision of torch's ops
// (float arithmetic, double scalars rounded to float once), so that the
// results agree to rounding: g += wd * p; m = m * b1 + (1 - b1) * g;
// v = v * b2 + (1 - b2) * g * g; p += -step_size * m / (sqrt(v) / sqrt(bc2) + eps).
void adam_update(int64_t n, float* __restrict p, const float* __restrict grad, float* __restrict m,
                 float* __restrict v, float weight_decay, float beta1, float one_minus_beta1, float beta2,
                 float one_minus_beta2, float sqrt_bc2, float eps, float neg_step_size) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float g = weight_decay != 0.0f ? grad[i] + weight_decay * p[i] : grad[i];
    const float mi = m[i] * beta1 + one_minus_beta1 * g;
    const float vi = v[i] * beta2 + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    p[i] += neg_step_size * mi / (std::sqrt(vi) / sqrt_bc2 + eps);
  }
}

}  // namespace

bool FusedAdam::fusable() const {
  for (const auto& group : param_groups_) {
    if (static_cast<const AdamOptions&>(group.options()).amsgrad()) return false;
    for (const torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!fusable_tensor(p) || !fusable_tensor(p.grad()) || p.grad().is_sparse()) return false;
      const auto s = state_.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      if (s == state_.end()) continue;
      const auto& st = static_cast<const AdamParamState&>(*s->second);
      if (!fusable_tensor(st.exp_avg()) || !fusable_tensor(st.exp_avg_sq())) return false;
    }
  }
  return true;
}

torch::Tensor FusedAdam::step(LossClosure closure) {
  if (!fusable()) return torch::optim::Adam::step(std::move(closure));
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      const std::string key = c10::guts::to_string(p.unsafeGetTensorImpl());
      auto& slot = state_[key];
      if (!slot) {  // as Adam creates it, so that either optimizer can load the other's state
        auto fresh = std::make_unique<AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& st = static_cast<AdamParamState&>(*slot);
      st.step(st.step() + 1);
      const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(st.step()));
      const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(st.step()));
      const torch::Tensor& grad = p.grad();
      adam_update(p.numel(), p.data_ptr<float>(), grad.data_ptr<float>(), st.exp_avg().data_ptr<float>(),
                  st.exp_avg_sq().data_ptr<float>(), static_cast<float>(o.weight_decay()), static_cast<float>(beta1),
                  static_cast<float>(1 - beta1), static_cast<float>(beta2), static_cast<float>(1 - beta2),
                  static_cast<float>(std::sqrt(bias_correction2)), static_cast<float>(o.eps()),
                  static_cast<float>(-(o.lr() / bias_correction1)));
    }
  }
  return loss;
}

}  // namespace tessera::train
