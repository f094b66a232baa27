#include "tessera/train/fused_adam.h"

#include <sstream>
#include <type_traits>

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>

#include "base/adam_update.h"

namespace tessera::train {
namespace {

using torch::optim::AdamOptions;
using torch::optim::AdamParamState;

bool fusable_tensor(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous() &&
         t.layout() == torch::kStrided;
}

// Adam's key for a parameter's state (a template, so that only the branch of the torch at hand compiles).
template <typename Key>
Key state_key(c10::TensorImpl* impl, std::unordered_map<const c10::TensorImpl*, std::string>& texts) {
  if constexpr (std::is_same_v<Key, std::string>) {  // torch 1.13
    auto [it, added] = texts.try_emplace(impl);
    if (added) {
      std::ostringstream text;
      text << static_cast<const void*>(impl);
      it->second = text.str();
    }
    return it->second;
  } else {
    return static_cast<Key>(impl);
  }
}

}  // namespace

FusedAdam::StateKey FusedAdam::key_of(const torch::Tensor& p) const {
  return state_key<StateKey>(p.unsafeGetTensorImpl(), keys_);
}

bool FusedAdam::fusable() const {
  for (const auto& group : param_groups_) {
    if (static_cast<const AdamOptions&>(group.options()).amsgrad()) return false;
    for (const torch::Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!fusable_tensor(p) || !fusable_tensor(p.grad()) || p.grad().is_sparse()) return false;
      const auto s = state_.find(key_of(p));
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
      auto& slot = state_[key_of(p)];
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
      AdamStep step{static_cast<float>(beta1), static_cast<float>(1 - beta1), static_cast<float>(beta2),
                    static_cast<float>(1 - beta2), static_cast<float>(o.eps()),
                    static_cast<float>(o.lr() / bias_correction1), static_cast<float>(std::sqrt(bias_correction2)),
                    static_cast<float>(o.weight_decay())};
      adam_update(p.numel(), p.data_ptr<float>(), p.grad().data_ptr<float>(), st.exp_avg().data_ptr<float>(),
                  st.exp_avg_sq().data_ptr<float>(), step);
    }
  }
  return loss;
}

}  // namespace tessera::train
