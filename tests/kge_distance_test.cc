// The pairwise distance kernels of TransE_l1 and RotatE against the same
// distances broadcast in libtorch, forward and backward, at shapes that reach
// every code path: row counts below, at and past the kernels' blocks of rows
// (1, 8, 11, 17) and widths below, at and past one vector (3, 16, 21, 40).
// Rows equal to a row they are compared with must give finite gradients (the
// distance's slope at 0 is taken as 0).
#include <torch/torch.h>

#include <gtest/gtest.h>

#include "nn/kge/distance_kernels.h"

namespace tessera::kge {
namespace {

using torch::Tensor;

// sum |a - b| over d, [C, K, N]; complex: sum of the moduli.
Tensor broadcast_distance(const Tensor& ar, const Tensor* ai, const Tensor& br, const Tensor* bi) {
  const Tensor x = ar.unsqueeze(2) - br.unsqueeze(1);
  if (!ai) return x.abs().sum(-1);
  const Tensor y = ai->unsqueeze(2) - bi->unsqueeze(1);
  return (x * x + y * y).sqrt().sum(-1);
}

std::vector<Tensor> grads_of(const Tensor& out, const Tensor& weights, const std::vector<Tensor>& inputs) {
  return torch::autograd::grad({(out * weights).sum()}, inputs);
}

class DistanceKernels : public ::testing::TestWithParam<bool> {};

TEST_P(DistanceKernels, MatchTheBroadcastFormulaAtEveryBlockShape) {
  const bool complex = GetParam();
  torch::manual_seed(5);
  const int64_t chunks = 2, n = 5;
  int checked = 0;
  for (const int64_t k : {1, 8, 11, 17})
    for (const int64_t d : {3, 16, 21, 40}) {
      SCOPED_TRACE("k " + std::to_string(k) + ", d " + std::to_string(d));
      // [re | im] rows, as the fused step lays them out.
      const Tensor a = torch::randn({chunks, k, 2 * d}), b = torch::randn({chunks, n, 2 * d});
      const auto re = [&](const Tensor& t) { return t.narrow(2, 0, d).detach().requires_grad_(); };
      const auto im = [&](const Tensor& t) { return t.narrow(2, d, d).detach().requires_grad_(); };
      const Tensor ar = re(a), ai = im(a), br = re(b), bi = im(b);
      const Tensor ours = complex ? pairwise_complex_l1(ar, ai, br, bi) : pairwise_l1(ar, br);
      const Tensor theirs = complex ? broadcast_distance(ar, &ai, br, &bi) : broadcast_distance(ar, nullptr, br, nullptr);
      EXPECT_TRUE(torch::allclose(ours, theirs, 1e-5, 1e-4)) << (ours - theirs).abs().max();
      const Tensor weights = torch::randn({chunks, k, n});
      const std::vector<Tensor> inputs = complex ? std::vector<Tensor>{ar, ai, br, bi} : std::vector<Tensor>{ar, br};
      const auto g1 = grads_of(ours, weights, inputs), g2 = grads_of(theirs, weights, inputs);
      for (size_t i = 0; i < inputs.size(); ++i)
        EXPECT_TRUE(torch::allclose(g1[i], g2[i], 1e-4, 1e-4)) << "gradient " << i << ": " << (g1[i] - g2[i]).abs().max();
      ++checked;
    }
  EXPECT_EQ(checked, 16);
}

TEST_P(DistanceKernels, EqualRowsHaveFiniteGradientsAndZeroDistance) {
  const bool complex = GetParam();
  const int64_t d = 21;
  const Tensor a = torch::randn({1, 9, d}).requires_grad_();
  const Tensor b = a.detach().narrow(1, 0, 4).clone().requires_grad_();  // b[n] == a[n]
  const Tensor out = complex ? pairwise_complex_l1(a, a * 2, b, b * 2) : pairwise_l1(a, b);
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(out[0][i][i].item<float>(), 0.f, 1e-5);
  const auto g = torch::autograd::grad({out.sum()}, {a, b});
  EXPECT_TRUE(torch::isfinite(g[0]).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(g[1]).all().item<bool>());
}

INSTANTIATE_TEST_SUITE_P(RealAndComplex, DistanceKernels, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Complex" : "Real"; });

}  // namespace
}  // namespace tessera::kge
