// A standalone KGE table's optimizers against their references: element-wise
// Adagrad is torch.optim.Adagrad itself (LibKGE's), step for step on the rows
// pushed, the others untouched; by default DGL-KE's row-wise Adagrad (one sum
// per row of the row's mean squared gradient); Adam is torch.optim.Adam on
// rows pushed at every step (1vsAll's), and counts steps per row otherwise.
// A replica among W trainers counts its squares W times in Adagrad's sums.
// Checkpoints carry each one's state and refuse another's.
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <vector>

#include "kge/embedding_table.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

constexpr int64_t kRows = 6, kDim = 5;
constexpr double kLr = 0.3;

// Two pushes: rows {0, 2, 5}, then {2, 3}, random gradients.
std::vector<std::pair<std::vector<int64_t>, torch::Tensor>> pushes() {
  torch::manual_seed(9);
  return {{{0, 2, 5}, torch::randn({3, kDim})}, {{2, 3}, torch::randn({2, kDim})}};
}

TEST(KgeTableOptimizer, ElementwiseAdagradIsTorchsAdagrad) {
  LocalTable table("e", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdagrad);
  torch::Tensor want = table.view().clone().set_requires_grad(true);
  torch::optim::Adagrad reference({want}, torch::optim::AdagradOptions(kLr).eps(1e-10));
  for (const auto& [ids, grad] : pushes()) {
    table.push(ids, grad);
    torch::Tensor dense = torch::zeros({kRows, kDim});
    dense.index_copy_(0, torch::tensor(ids), grad);
    want.mutable_grad() = dense;
    reference.step();
  }
  EXPECT_LT((table.view() - want.detach()).abs().max().item<float>(), 1e-6f);
  EXPECT_EQ(table.read_state().sizes(), (std::vector<int64_t>{kRows * kDim}));
  EXPECT_EQ(table.read_state().view({kRows, kDim})[1].abs().sum().item<float>(), 0.f);  // never pushed
}

TEST(KgeTableOptimizer, DefaultIsDglKesRowWiseAdagrad) {
  LocalTable table("e", kRows, kDim, uniform_init(0.5, 1), kLr);
  torch::Tensor w = table.view().clone(), sums = torch::zeros({kRows});
  for (const auto& [ids, grad] : pushes()) {
    table.push(ids, grad);
    for (size_t i = 0; i < ids.size(); ++i) {
      sums[ids[i]] += grad[i].pow(2).mean();
      w[ids[i]] -= kLr * grad[i] / (sums[ids[i]].sqrt() + 1e-10);
    }
  }
  EXPECT_LT((table.view() - w).abs().max().item<float>(), 1e-6f);
  EXPECT_LT((table.read_state() - sums).abs().max().item<float>(), 1e-6f);
}

// A relation replica among W trainers counts its own squared gradients W
// times in either Adagrad's sums (its expectation of the shared sum); Adam's
// moments count once whatever W.
TEST(KgeTableOptimizer, AReplicaAmongTrainersCountsItsSquaresThatManyTimes) {
  constexpr int kTrainers = 3;
  for (const store::SparseOptimizer kind : {store::SparseOptimizer::kAdagrad, store::SparseOptimizer::kRowAdagrad}) {
    LocalTable table("r", kRows, kDim, uniform_init(0.5, 1), kLr, kind);
    table.set_replicas(kTrainers);
    torch::Tensor w = table.view().clone();
    const bool rowwise = kind == store::SparseOptimizer::kRowAdagrad;
    torch::Tensor sums = rowwise ? torch::zeros({kRows}) : torch::zeros({kRows, kDim});
    for (const auto& [ids, grad] : pushes()) {
      table.push(ids, grad);
      for (size_t i = 0; i < ids.size(); ++i) {
        sums[ids[i]] += kTrainers * (rowwise ? grad[i].pow(2).mean() : grad[i].pow(2));
        w[ids[i]] -= kLr * grad[i] / (sums[ids[i]].sqrt() + 1e-10);
      }
    }
    EXPECT_LT((table.view() - w).abs().max().item<float>(), 1e-6f) << static_cast<int>(kind);
    EXPECT_LT((table.read_state() - sums.reshape({-1})).abs().max().item<float>(), 1e-5f) << static_cast<int>(kind);
  }
  LocalTable one("r", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdam);
  LocalTable replica("r", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdam);
  replica.set_replicas(kTrainers);
  for (const auto& [ids, grad] : pushes()) {
    one.push(ids, grad);
    replica.push(ids, grad);
  }
  EXPECT_TRUE(replica.read_state().equal(one.read_state()));
  EXPECT_TRUE(replica.view().equal(one.view()));
}

TEST(KgeTableOptimizer, AdamOnRowsPushedEveryStepIsTorchsAdam) {
  LocalTable table("e", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdam);
  torch::Tensor want = table.view().clone().set_requires_grad(true);
  torch::optim::Adam reference({want}, torch::optim::AdamOptions(kLr));  // betas 0.9, 0.999, eps 1e-8
  const std::vector<int64_t> all{0, 1, 2, 3, 4, 5};
  torch::manual_seed(4);
  for (int step = 0; step < 3; ++step) {
    const torch::Tensor grad = torch::randn({kRows, kDim});
    table.push(all, grad);
    want.mutable_grad() = grad.clone();
    reference.step();
  }
  EXPECT_LT((table.view() - want.detach()).abs().max().item<float>(), 1e-5f);
  // The state: both moments, then the steps (3 for every row).
  const torch::Tensor state = table.read_state();
  ASSERT_EQ(state.numel(), 2 * kRows * kDim + kRows);
  EXPECT_TRUE(state.narrow(0, 2 * kRows * kDim, kRows).equal(torch::full({kRows}, 3.0f)));
}

TEST(KgeTableOptimizer, AdamCountsTheStepsOfEachRow) {
  LocalTable table("e", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdam);
  const torch::Tensor w0 = table.view().clone();
  const auto steps = pushes();
  for (const auto& [ids, grad] : steps) table.push(ids, grad);
  // Row 3's one step is Adam's first step, whatever the others took: lr x sign(g) (to eps).
  const torch::Tensor g3 = steps[1].second[1];
  EXPECT_LT((table.view()[3] - (w0[3] - kLr * g3.sign())).abs().max().item<float>(), 1e-5f);
  EXPECT_TRUE(table.view()[1].equal(w0[1]));  // never pushed
  const torch::Tensor counts = table.read_state().narrow(0, 2 * kRows * kDim, kRows);
  EXPECT_TRUE(counts.equal(torch::tensor({1.0f, 0.0f, 2.0f, 1.0f, 0.0f, 1.0f})));
}

TEST(KgeTableOptimizer, CheckpointsCarryTheirOwnSumsAndRefuseTheOthers) {
  LocalTable elementwise("e", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdagrad);
  LocalTable rowwise("r", kRows, kDim, uniform_init(0.5, 1), kLr);
  for (const auto& [ids, grad] : pushes()) elementwise.push(ids, grad);
  LocalTable resumed("e2", kRows, kDim, uniform_init(0.1, 2), kLr, store::SparseOptimizer::kAdagrad);
  resumed.write_all(elementwise.read_all(), elementwise.read_state().reshape({-1}));  // as the checkpoint writes it
  EXPECT_TRUE(resumed.read_state().equal(elementwise.read_state()));
  EXPECT_TRUE(resumed.view().equal(elementwise.view()));
  try {
    rowwise.write_all(elementwise.read_all(), elementwise.read_state());
    FAIL() << "a row-wise table took element-wise sums";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("30 optimizer state values does not fit a table of 6 x 5 (6 values: "
                                         "row-wise Adagrad)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(resumed.write_all(rowwise.read_all(), rowwise.read_state()), Error);
  // Adam's state resumes whole: a resumed table's next step is the uninterrupted one's.
  LocalTable adam("a", kRows, kDim, uniform_init(0.5, 1), kLr, store::SparseOptimizer::kAdam);
  LocalTable adam_resumed("a2", kRows, kDim, uniform_init(0.1, 2), kLr, store::SparseOptimizer::kAdam);
  const auto steps = pushes();
  adam.push(steps[0].first, steps[0].second);
  adam_resumed.write_all(adam.read_all(), adam.read_state());
  adam.push(steps[1].first, steps[1].second);
  adam_resumed.push(steps[1].first, steps[1].second);
  EXPECT_TRUE(adam_resumed.view().equal(adam.view()));
  EXPECT_THROW(adam_resumed.write_all(elementwise.read_all(), elementwise.read_state()), Error);
}

}  // namespace
}  // namespace tessera::kge
