// A standalone KGE table's optimizers against their references: with
// `elementwise` it is torch.optim.Adagrad itself (LibKGE's), step for step on
// the rows pushed, the others untouched; by default DGL-KE's row-wise Adagrad
// (one sum per row of the row's mean squared gradient). Checkpoints carry
// each one's sums and refuse the other's.
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
  LocalTable table("e", kRows, kDim, uniform_init(0.5, 1), kLr, true);
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
  EXPECT_EQ(table.read_state().sizes(), (std::vector<int64_t>{kRows, kDim}));
  EXPECT_EQ(table.read_state()[1].abs().sum().item<float>(), 0.f);  // never pushed
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

TEST(KgeTableOptimizer, CheckpointsCarryTheirOwnSumsAndRefuseTheOthers) {
  LocalTable elementwise("e", kRows, kDim, uniform_init(0.5, 1), kLr, true);
  LocalTable rowwise("r", kRows, kDim, uniform_init(0.5, 1), kLr);
  for (const auto& [ids, grad] : pushes()) elementwise.push(ids, grad);
  LocalTable resumed("e2", kRows, kDim, uniform_init(0.1, 2), kLr, true);
  resumed.write_all(elementwise.read_all(), elementwise.read_state().reshape({-1}));  // as the checkpoint writes it
  EXPECT_TRUE(resumed.read_state().equal(elementwise.read_state()));
  EXPECT_TRUE(resumed.view().equal(elementwise.view()));
  try {
    rowwise.write_all(elementwise.read_all(), elementwise.read_state());
    FAIL() << "a row-wise table took element-wise sums";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("30 Adagrad sums does not fit a table of 6 x 5 (6 sums"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(resumed.write_all(rowwise.read_all(), rowwise.read_state()), Error);
}

}  // namespace
}  // namespace tessera::kge
