// FusedAdam (tessera/train/fused_adam.h) against torch::optim::Adam: the
// same parameters, gradients and options stepped side by side, compared
// after every step (parameters and both moments); state saved by one and
// loaded by the other; the cases it hands to Adam's own step.
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tessera/train/fused_adam.h"

namespace tessera::train {
namespace {

using torch::optim::Adam;
using torch::optim::AdamOptions;
using torch::optim::AdamParamState;

// GraphSAGE-like shapes, an empty tensor and a scalar.
std::vector<torch::Tensor> make_params(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> ps;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{16, 100}, {16}, {47, 16}, {0, 5}, {}})
    ps.push_back(torch::randn(shape).requires_grad_(true));
  return ps;
}

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& ps) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : ps) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

// The same random gradients on both sets (all but `skip`, which keeps none).
void set_grads(std::vector<torch::Tensor>& a, std::vector<torch::Tensor>& b, int step, int skip = -1) {
  torch::manual_seed(1000 + step);
  for (size_t i = 0; i < a.size(); ++i) {
    if (static_cast<int>(i) == skip) continue;
    const torch::Tensor g = torch::randn_like(a[i]) * (1.0 + i);
    a[i].mutable_grad() = g.clone();
    b[i].mutable_grad() = g.clone();
  }
}

const AdamParamState* state_of(const torch::optim::Optimizer& opt, const torch::Tensor& p) {
  const auto s = opt.state().find(c10::guts::to_string(p.unsafeGetTensorImpl()));
  return s == opt.state().end() ? nullptr : static_cast<const AdamParamState*>(s->second.get());
}

// Equal up to float rounding: 1e-5 of the tensor's largest magnitude
// (elementwise relative error is meaningless where a moment crosses zero).
::testing::AssertionResult near(const torch::Tensor& got, const torch::Tensor& want) {
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << "sizes differ";
  if (want.numel() == 0) return ::testing::AssertionSuccess();
  const double diff = (got - want).abs().max().item<double>(), scale = want.abs().max().item<double>();
  if (diff <= 1e-5 * scale + 1e-12) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "differs by " << diff << " at scale " << scale;
}

void expect_same(const torch::optim::Optimizer& ref_opt, const std::vector<torch::Tensor>& ref,
                 const torch::optim::Optimizer& got_opt, const std::vector<torch::Tensor>& got, int step) {
  for (size_t i = 0; i < ref.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(step) + ", parameter " + std::to_string(i));
    EXPECT_TRUE(near(got[i], ref[i]));
    const AdamParamState* r = state_of(ref_opt, ref[i]);
    const AdamParamState* g = state_of(got_opt, got[i]);
    ASSERT_EQ(r == nullptr, g == nullptr);
    if (r == nullptr) continue;
    EXPECT_EQ(g->step(), r->step());
    EXPECT_TRUE(near(g->exp_avg(), r->exp_avg()));
    EXPECT_TRUE(near(g->exp_avg_sq(), r->exp_avg_sq()));
  }
}

TEST(FusedAdamTest, StepsAsAdamDoes) {
  for (const AdamOptions& options : {AdamOptions(0.003), AdamOptions(0.01).weight_decay(0.05).betas({0.8, 0.99}).eps(1e-6)}) {
    std::vector<torch::Tensor> ref = make_params(1), got = clones(ref);
    Adam ref_opt(ref, options);
    FusedAdam got_opt(got, options);
    for (int step = 1; step <= 6; ++step) {
      // Parameter 2 has no gradient in step 2: both leave it and its state alone.
      set_grads(ref, got, step, step == 2 ? 2 : -1);
      ref_opt.step();
      got_opt.step();
      expect_same(ref_opt, ref, got_opt, got, step);
      ref_opt.zero_grad();
      got_opt.zero_grad();
    }
    // A real step moved every parameter.
    EXPECT_FALSE(torch::allclose(got[0], make_params(1)[0]));
  }
}

TEST(FusedAdamTest, ParametersWithoutGradientsGetNoState) {
  std::vector<torch::Tensor> ref = make_params(2), got = clones(ref);
  FusedAdam opt(got, AdamOptions(0.1));
  got[0].mutable_grad() = torch::ones_like(got[0]);
  opt.step();
  EXPECT_NE(state_of(opt, got[0]), nullptr);
  EXPECT_EQ(state_of(opt, got[1]), nullptr);
  EXPECT_TRUE(torch::equal(got[1], ref[1]));
  EXPECT_FALSE(torch::equal(got[0], ref[0]));
}

// Either optimizer resumes from the other's saved state (checkpoints).
TEST(FusedAdamTest, StateIsInterchangeableWithAdams) {
  for (bool fused_first : {false, true}) {
    SCOPED_TRACE(fused_first ? "FusedAdam -> Adam" : "Adam -> FusedAdam");
    std::vector<torch::Tensor> a = make_params(3), b = clones(a);
    std::unique_ptr<torch::optim::Optimizer> first, second;
    if (fused_first) first = std::make_unique<FusedAdam>(a, AdamOptions(0.01));
    else first = std::make_unique<Adam>(a, AdamOptions(0.01));
    Adam reference(b, AdamOptions(0.01));
    for (int step = 1; step <= 3; ++step) {
      set_grads(a, b, step);
      first->step();
      reference.step();
    }
    std::stringstream saved;
    {
      torch::serialize::OutputArchive archive;
      first->save(archive);
      archive.save_to(saved);
    }
    if (fused_first) second = std::make_unique<Adam>(a, AdamOptions(0.01));
    else second = std::make_unique<FusedAdam>(a, AdamOptions(0.01));
    {
      torch::serialize::InputArchive archive;
      archive.load_from(saved);
      second->load(archive);
    }
    for (int step = 4; step <= 6; ++step) {
      set_grads(a, b, step);
      second->step();
      reference.step();
      expect_same(reference, b, *second, a, step);
    }
  }
}

// amsgrad and non-contiguous parameters take Adam's own step: still Adam's values.
TEST(FusedAdamTest, CasesItDoesNotFuseRunAdamsStep) {
  {
    std::vector<torch::Tensor> ref = make_params(4), got = clones(ref);
    Adam ref_opt(ref, AdamOptions(0.01).amsgrad(true));
    FusedAdam got_opt(got, AdamOptions(0.01).amsgrad(true));
    for (int step = 1; step <= 3; ++step) {
      set_grads(ref, got, step);
      ref_opt.step();
      got_opt.step();
      expect_same(ref_opt, ref, got_opt, got, step);
      EXPECT_TRUE(state_of(got_opt, got[0])->max_exp_avg_sq().defined());
    }
  }
  {
    torch::manual_seed(5);
    const torch::Tensor base = torch::randn({8, 5});
    std::vector<torch::Tensor> ref{base.t().detach().requires_grad_(true)};
    std::vector<torch::Tensor> got{base.clone().t().detach().requires_grad_(true)};
    ASSERT_FALSE(got[0].is_contiguous());
    Adam ref_opt(ref, AdamOptions(0.01));
    FusedAdam got_opt(got, AdamOptions(0.01));
    for (int step = 1; step <= 3; ++step) {
      set_grads(ref, got, step);
      ref_opt.step();
      got_opt.step();
      expect_same(ref_opt, ref, got_opt, got, step);
    }
  }
}

}  // namespace
}  // namespace tessera::train
