// What the 1vsAll and KvsAll step tests expect of a step against its autograd
// reference: the loss (and, without a penalty, the cross-entropy alone) to
// 1e-5 of its size, both tables' gradients to 1e-5, and an entity gradient
// that is not all zero.
#pragma once

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tessera::kge {

inline void expect_step_matches_autograd(double loss, double cross_entropy, double want, bool penalised,
                                         const torch::Tensor& entity_grad, const torch::Tensor& want_entity_grad,
                                         const torch::Tensor& relation_grad, const torch::Tensor& want_relation_grad) {
  const double tolerance = 1e-5 * std::max(1.0, std::abs(want));
  EXPECT_NEAR(loss, want, tolerance);
  if (!penalised) {
    EXPECT_NEAR(cross_entropy, want, tolerance);
  }
  EXPECT_LT((entity_grad - want_entity_grad).abs().max().item<float>(), 1e-5f);
  EXPECT_LT((relation_grad - want_relation_grad).abs().max().item<float>(), 1e-5f);
  EXPECT_GT(entity_grad.abs().sum().item<float>(), 0.f);
}

}  // namespace tessera::kge
