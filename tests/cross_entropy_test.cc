// nn::cross_entropy (tessera/nn/cross_entropy.h) against libtorch's
// cross_entropy in double precision, forward and backward, and its accuracy
// count against argmax + eq + sum: random and large logits, ignored rows
// (-100), ties, one class, no rows, and a scaled loss.
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tessera/base/error.h"
#include "tessera/nn/cross_entropy.h"
#include "test_util.h"

namespace tessera::nn {
namespace {

using tessera::testing::expect_error;

::testing::AssertionResult near_at_scale(const torch::Tensor& got, const torch::Tensor& want) {
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << "sizes differ";
  if (want.numel() == 0) return ::testing::AssertionSuccess();
  const double diff = (got.to(torch::kDouble) - want).abs().max().item<double>();
  const double scale = want.abs().max().item<double>();
  if (diff <= 1e-5 * scale + 1e-9) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "differs by " << diff << " at scale " << scale;
}

struct LossCase {
  int64_t rows, classes;
  double spread;         // logits' standard deviation
  int ignore_every;      // every k-th row's label is -100 (0: none)
  bool integer_logits;   // many ties
  double loss_scale;     // the root is loss * loss_scale
};

void check_loss(const LossCase& k, uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << k.rows << " x " << k.classes << ", spread " << k.spread << ", ignore every "
                                    << k.ignore_every << (k.integer_logits ? ", integer logits" : "") << ", scale "
                                    << k.loss_scale);
  torch::manual_seed(seed);
  torch::Tensor base = torch::randn({k.rows, k.classes}) * k.spread;
  if (k.integer_logits) base = base.round().clamp(-2, 2);
  torch::Tensor labels = torch::randint(0, k.classes, {k.rows}, torch::kInt64);
  if (k.ignore_every > 0)
    for (int64_t i = 0; i < k.rows; i += k.ignore_every) labels[i] = -100;

  const torch::Tensor want_x = base.to(torch::kDouble).requires_grad_(true);
  const torch::Tensor want = torch::nn::functional::cross_entropy(want_x, labels);
  (want * k.loss_scale).backward();
  const int64_t want_correct = base.argmax(1).eq(labels).sum().item<int64_t>();

  const torch::Tensor got_x = base.clone().requires_grad_(true);
  int64_t correct = -1;
  const torch::Tensor got = cross_entropy(got_x, labels, &correct);
  (got * k.loss_scale).backward();

  EXPECT_EQ(correct, want_correct);
  EXPECT_EQ(got.dim(), 0);
  if (std::isnan(want.item<double>())) {
    EXPECT_TRUE(std::isnan(got.item<double>()));
  } else {
    EXPECT_NEAR(got.item<double>(), want.item<double>(), 1e-5 * std::abs(want.item<double>()) + 1e-7);
  }
  EXPECT_TRUE(near_at_scale(got_x.grad(), want_x.grad()));
}

TEST(CrossEntropyTest, EqualsLibtorchForwardAndBackward) {
  const std::vector<LossCase> cases = {
      {1000, 47, 1.0, 0, false, 1.0},  // the bench's shape
      {37, 5, 1.0, 3, false, 1.0},     // ignored rows
      {64, 47, 40.0, 0, false, 1.0},   // large logits: the shift by the row's max keeps exp finite
      {50, 7, 1.0, 0, true, 1.0},      // ties: the first maximal logit counts
      {20, 1, 1.0, 0, false, 1.0},     // one class: loss 0, gradient 0
      {33, 16, 1.0, 0, false, 2.5},    // not the root: the backward scales
      {25, 17, 3.0, 4, false, 1.0},    // one class past a vector: the masked tail
      {9, 4, 1.0, 1, false, 1.0},      // every row ignored: NaN, as torch's 0 / 0
      {0, 6, 1.0, 0, false, 1.0},      // no rows
  };
  uint64_t seed = 1;
  for (const LossCase& k : cases) check_loss(k, seed++);
}

TEST(CrossEntropyTest, WithoutGradientsOrCountStillEqualsLibtorch) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({100, 10});
  const torch::Tensor labels = torch::randint(0, 10, {100}, torch::kInt64);
  torch::NoGradGuard no_grad;
  EXPECT_NEAR(cross_entropy(x, labels).item<double>(), torch::nn::functional::cross_entropy(x, labels).item<double>(),
              1e-5);
}

// A double input runs libtorch's ops; a transposed one is made contiguous.
TEST(CrossEntropyTest, OtherDtypesAndLayoutsGiveLibtorchsResults) {
  torch::manual_seed(8);
  const torch::Tensor labels = torch::randint(0, 6, {12}, torch::kInt64);
  const torch::Tensor d = torch::randn({12, 6}, torch::kDouble);
  int64_t correct = -1;
  EXPECT_NEAR(cross_entropy(d, labels, &correct).item<double>(),
              torch::nn::functional::cross_entropy(d, labels).item<double>(), 1e-12);
  EXPECT_EQ(correct, d.argmax(1).eq(labels).sum().item<int64_t>());
  const torch::Tensor t = torch::randn({6, 12}).t();
  EXPECT_NEAR(cross_entropy(t, labels).item<double>(), torch::nn::functional::cross_entropy(t, labels).item<double>(),
              1e-5);
}

TEST(CrossEntropyTest, ALabelOutsideTheClassesIsAnErrorNamingTheRow) {
  const torch::Tensor x = torch::randn({4, 3});
  expect_error([&] { cross_entropy(x, torch::tensor({0, 1, 3, 2}, torch::kInt64)); }, "row 2 has label 3");
  expect_error([&] { cross_entropy(x, torch::tensor({0, -1, 1, 2}, torch::kInt64)); }, "row 1 has label -1");
}

}  // namespace
}  // namespace tessera::nn
