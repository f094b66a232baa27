// torch::optim::Adam with its step as one pass per parameter over raw
// buffers. At a GNN's weight sizes (GraphSAGE's 6 tensors, ~4,000 floats)
// Adam's ~10 tensor ops per parameter cost their dispatch, not their
// arithmetic: 91-168 us per step through torch's ops, 8-16 us here.
//
// Contract: the same update as torch::optim::Adam (1.13: bias-corrected
// moments, L2 weight decay added to the gradient, amsgrad), the same
// per-parameter state (AdamParamState under the same keys), so save / load
// and checkpoints are interchangeable with Adam's. The values agree to float
// rounding. A step whose parameters are not all contiguous float32 CPU
// tensors with dense gradients, or that asks for amsgrad, runs Adam's own
// step instead.
#pragma once

#include <torch/optim/adam.h>

#include <string>
#include <unordered_map>

namespace tessera::train {

class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;

  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  // Whether every parameter with a gradient suits the fused pass.
  bool fusable() const;
  // The state's key of parameter p, as Adam's: its TensorImpl's address,
  // as text in torch 1.13 (made once per parameter: ostringstream's
  // formatting each step cost more than the update of a GNN's small
  // weights) and the pointer itself from torch 2 on.
  using StateKey = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
  StateKey key_of(const torch::Tensor& p) const;

  mutable std::unordered_map<const c10::TensorImpl*, std::string> keys_;
};

}  // namespace tessera::train
