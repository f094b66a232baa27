// relu_dropout and dropout (tessera/nn/relu_dropout.h) against libtorch's
// reference: the output is relu(x) / (1 - p) (x / (1 - p)) where kept and 0
// where dropped, the kept share is 1 - p within a binomial bound, the
// backward equals autograd over the unfused ops with the same mask, and
// seeding repeats it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "tessera/base/error.h"
#include "tessera/nn/relu_dropout.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::nn {
namespace {

TEST(ReluDropout, MatchesTheUnfusedOpsOnItsMask) {
  for (const double p : {0.1, 0.5, 0.75}) {
    torch::manual_seed(3);
    // Odd sizes: the last block of draws is partial.
    const torch::Tensor x = torch::randn({517, 13}, torch::requires_grad());
    const torch::Tensor out = relu_dropout(x, p, /*training=*/true);
    const torch::Tensor positive = x.detach() > 0;
    // Where the input is positive, the output is 0 (dropped) or x / (1 - p).
    const torch::Tensor kept = out.detach() != 0;
    EXPECT_TRUE((kept & ~positive).sum().item<int64_t>() == 0) << "an output is non-zero where x <= 0";
    const torch::Tensor scaled = x.detach() / (1.0 - p);
    EXPECT_TRUE(torch::allclose(out.detach().masked_select(kept), scaled.masked_select(kept), 1e-6, 0));
    // The kept share of positive inputs: 1 - p within 5 standard deviations.
    const double n = positive.sum().item<double>();
    const double share = kept.sum().item<double>() / n;
    EXPECT_NEAR(share, 1.0 - p, 5.0 * std::sqrt(p * (1.0 - p) / n)) << "p = " << p;

    // The backward against autograd over the unfused ops with this mask.
    const torch::Tensor g = torch::randn_like(out);
    out.backward(g);
    const torch::Tensor x_ref = x.detach().clone().requires_grad_(true);
    (torch::relu(x_ref) * kept.to(torch::kFloat32) / (1.0 - p)).backward(g);
    EXPECT_TRUE(torch::allclose(x.grad(), x_ref.grad(), 1e-5, 1e-7)) << "p = " << p;
  }
}

// The kernels' draws are quad_draws' bits whichever vector path took them (kernels.x86-64 reruns this on the
// portable build, the default run on the host's own: AVX2's emulated 64-bit products, AVX-512's), and a draw that
// keeps everything takes none.
TEST(ReluDropout, TheKernelsDrawQuadDrawsBitsAtEveryCpuLevel) {
  const detail::DropoutDraw draw = detail::DropoutDraw::with_seed(0x1234567890abcdefULL, 0.5);
  const int64_t n = 1000;  // blocks of 64 and a partial one
  std::vector<float> x(n, 1.0f), out(n);
  detail::dropout_forward(x.data(), n, draw, out.data());
  int64_t wrong = 0;
  for (int64_t e = 0; e < n; ++e) {
    const uint64_t quad = detail::quad_draws(draw, static_cast<uint64_t>(e / 4));
    const uint32_t bits = static_cast<uint32_t>(quad >> (16 * (e % 4))) & 0xffff;
    wrong += (out[e] != 0.0f) != (bits < draw.keep_below);
  }
  EXPECT_EQ(wrong, 0);
  const detail::DropoutDraw keep_all = detail::DropoutDraw::with_seed(7, 0.0);
  x[3] = -2.0f;
  detail::relu_dropout_forward(x.data(), n, keep_all, out.data());
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[4], 1.0f);
  detail::dropout_forward(x.data(), n, keep_all, out.data());
  EXPECT_EQ(out[3], -2.0f);
}

TEST(ReluDropout, SeededRunsRepeatAndEvaluationIsRelu) {
  const torch::Tensor x = torch::randn({100, 7});
  torch::manual_seed(11);
  const torch::Tensor a = relu_dropout(x, 0.5, true);
  torch::manual_seed(11);
  const torch::Tensor b = relu_dropout(x, 0.5, true);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, relu_dropout(x, 0.5, true))) << "two draws in a row gave the same mask";
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.5, false), torch::relu(x)));
  EXPECT_TRUE(torch::equal(relu_dropout(x, 0.0, true), torch::relu(x)));
  EXPECT_EQ(relu_dropout(torch::empty({0, 4}), 0.5, true).numel(), 0);
}

TEST(ReluDropout, BadInputNamesTheProblem) {
  EXPECT_THROW(relu_dropout(torch::randn({3}), 1.0, true), Error);
  EXPECT_THROW(relu_dropout(torch::randn({3}), -0.1, true), Error);
  EXPECT_THROW(relu_dropout(torch::randn({3}, torch::kFloat64), 0.5, true), Error);
}

TEST(ElementwiseDropout, MatchesTheUnfusedOpsOnItsMaskAndDrawsItAgainInTheBackward) {
  for (const double p : {0.1, 0.5, 0.75}) {
    torch::manual_seed(5);
    const torch::Tensor x = torch::randn({517, 13}, torch::requires_grad());
    const torch::Tensor out = elementwise_dropout(x, p, /*training=*/true);
    const torch::Tensor kept = out.detach() != 0;
    const double n = static_cast<double>(x.numel());
    EXPECT_TRUE(torch::allclose(out.detach().masked_select(kept), (x.detach() / (1.0 - p)).masked_select(kept), 1e-6, 0));
    EXPECT_NEAR(kept.sum().item<double>() / n, 1.0 - p, 5.0 * std::sqrt(p * (1.0 - p) / n)) << "p = " << p;
    // Another draw between forward and backward must not change the mask the backward uses.
    (void)elementwise_dropout(torch::randn({64}), 0.5, true);
    const torch::Tensor g = torch::randn_like(out);
    out.backward(g);
    EXPECT_TRUE(torch::allclose(x.grad(), g * kept.to(torch::kFloat32) / (1.0 - p), 1e-5, 1e-7)) << "p = " << p;
  }
}

TEST(ElementwiseDropout, SeededRunsRepeatAndEvaluationIsTheIdentity) {
  const torch::Tensor x = torch::randn({100, 7});
  torch::manual_seed(11);
  const torch::Tensor a = elementwise_dropout(x, 0.5, true);
  torch::manual_seed(11);
  EXPECT_TRUE(torch::equal(a, elementwise_dropout(x, 0.5, true)));
  EXPECT_FALSE(torch::equal(a, elementwise_dropout(x, 0.5, true))) << "two draws in a row gave the same mask";
  EXPECT_TRUE(torch::equal(elementwise_dropout(x, 0.5, false), x));
  EXPECT_TRUE(torch::equal(elementwise_dropout(x, 0.0, true), x));
  EXPECT_EQ(elementwise_dropout(torch::empty({0, 4}), 0.5, true).numel(), 0);
  EXPECT_THROW(elementwise_dropout(x, 1.0, true), Error);
  EXPECT_THROW(elementwise_dropout(x.to(torch::kFloat64), 0.5, true), Error);
}

}  // namespace
}  // namespace tessera::nn
