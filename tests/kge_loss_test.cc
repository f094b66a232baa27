// KGE losses on scores small enough to work out by hand: each loss genre,
// the self-adversarial weighting (and that its weights carry no gradient),
// the pairwise form, the -rc / -rn penalty, and bad combinations.
#include <torch/torch.h>

#include <cmath>

#include <gtest/gtest.h>

#include "nn/kge/loss.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double nls(double x) { return -std::log(sigmoid(x)); }  // -log sigmoid(x)

// One positive scored 2, its negatives scored 1 and -1.
struct Scores {
  torch::Tensor pos = torch::tensor({2.0f}, torch::requires_grad());
  torch::Tensor neg = torch::tensor({{1.0f, -1.0f}}, torch::requires_grad());
};

LossOptions with(LossGenre genre) {
  LossOptions o;
  o.genre = genre;
  return o;
}

TEST(KgeLoss, EachGenreMatchesItsFormula) {
  const double logsigmoid = (nls(2) + (nls(-1) + nls(1)) / 2) / 2;
  for (const LossGenre g : {LossGenre::kLogsigmoid, LossGenre::kLogistic, LossGenre::kBCE}) {
    Scores s;
    EXPECT_NEAR(kge_loss(s.pos, s.neg, with(g)).total.item<double>(), logsigmoid, 1e-6) << static_cast<int>(g);
  }
  Scores s;
  // Hinge, margin 1: max(0, 1 - 2) = 0; negatives max(0, 1 + 1) = 2 and max(0, 1 - 1) = 0.
  const Loss hinge = kge_loss(s.pos, s.neg, with(LossGenre::kHinge));
  EXPECT_NEAR(hinge.total.item<double>(), (0 + (2 + 0) / 2.0) / 2, 1e-6);
  EXPECT_NEAR(hinge.negative, 1.0, 1e-6);
}

TEST(KgeLoss, SelfAdversarialWeightsFollowTheScoresAndCarryNoGradient) {
  Scores s;
  LossOptions o;
  o.adversarial = true;
  o.temperature = 1.0;
  const double w1 = std::exp(1.0) / (std::exp(1.0) + std::exp(-1.0)), w2 = 1 - w1;
  const double expected = (nls(2) + w1 * nls(-1) + w2 * nls(1)) / 2;
  const Loss loss = kge_loss(s.pos, s.neg, o);
  EXPECT_NEAR(loss.total.item<double>(), expected, 1e-6);
  loss.total.backward();
  // d/ds of -log sigmoid(-s) is sigmoid(s); the weights stay constant.
  EXPECT_NEAR(s.neg.grad()[0][0].item<double>(), w1 * sigmoid(1) / 2, 1e-6);
  EXPECT_NEAR(s.neg.grad()[0][1].item<double>(), w2 * sigmoid(-1) / 2, 1e-6);
  EXPECT_NEAR(s.pos.grad()[0].item<double>(), -sigmoid(-2) / 2, 1e-6);
}

TEST(KgeLoss, PairwiseScoresTheDifferences) {
  Scores s;
  LossOptions o = with(LossGenre::kLogistic);
  o.pairwise = true;
  // softplus(-(2 - 1)) and softplus(-(2 + 1)), averaged.
  const double expected = (std::log1p(std::exp(-1.0)) + std::log1p(std::exp(-3.0))) / 2;
  EXPECT_NEAR(kge_loss(s.pos, s.neg, o).total.item<double>(), expected, 1e-6);
}

TEST(KgeLoss, RegularizationSumsPowersOfTheRowsUsed) {
  const torch::Tensor a = torch::tensor({{1.0f, -2.0f}}), b = torch::tensor({{0.5f}});
  EXPECT_NEAR(regularization({a, b}, 0.1, 3).item<double>(), 0.1 * (1 + 8 + 0.125), 1e-6);
  EXPECT_EQ(regularization({a, b}, 0, 3).item<double>(), 0.0);
}

TEST(KgeLoss, BadCombinationsAreClearErrors) {
  LossOptions o;
  o.pairwise = true;
  o.adversarial = true;
  EXPECT_THROW(validate(o), Error);
  o.adversarial = false;
  EXPECT_THROW(validate(o), Error) << "pairwise Logsigmoid";
  o.genre = LossGenre::kHinge;
  EXPECT_NO_THROW(validate(o));
  o.temperature = 0;
  EXPECT_THROW(validate(o), Error);
  EXPECT_THROW(parse_loss_genre("MSE"), Error);
  EXPECT_EQ(parse_loss_genre("BCE"), LossGenre::kBCE);
  Scores s;
  EXPECT_THROW(kge_loss(s.pos, torch::zeros({2, 3}), LossOptions()), Error) << "negatives of 2 positives for 1";
}

}  // namespace
}  // namespace tessera::kge
