#include "train/embedding_probe.h"

#include "tessera/base/error.h"

namespace tessera::train {
namespace {

double accuracy(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& rows) {
  if (rows.numel() == 0) return -1;
  return logits.index_select(0, rows).argmax(1).eq(labels.index_select(0, rows)).to(torch::kFloat64).mean()
      .item<double>();
}

}  // namespace

ProbeAccuracy logistic_regression_probe(torch::Tensor emb, const torch::Tensor& labels, const torch::Tensor& train,
                                        const torch::Tensor& val, const torch::Tensor& test) {
  if (emb.dim() != 2 || labels.dim() != 1 || emb.size(0) != labels.size(0))
    fail("logistic regression: {} embedding rows for {} labels", emb.size(0), labels.size(0));
  if (train.numel() == 0) fail("logistic regression: no training nodes to fit on (the train_mask is empty)");
  torch::NoGradGuard outside;
  emb = emb.to(torch::kFloat64);
  emb = (emb - emb.mean(0, true)) / emb.std(0, true, true).clamp_min(1e-12);
  const torch::Tensor x = emb.index_select(0, train), y = labels.index_select(0, train);
  const int64_t classes = labels.max().item<int64_t>() + 1, n = x.size(0);
  torch::Tensor w = torch::zeros({x.size(1), classes}, torch::kFloat64).requires_grad_();
  torch::Tensor b = torch::zeros({classes}, torch::kFloat64).requires_grad_();
  // scikit-learn's objective divided by C * n: the mean log-loss plus ||w||^2 / (2 C n), bias unpenalized.
  torch::optim::LBFGS solver({w, b}, torch::optim::LBFGSOptions(1.0).max_iter(500).tolerance_grad(1e-9)
                                         .line_search_fn("strong_wolfe"));
  auto objective = [&] {
    solver.zero_grad();
    torch::AutoGradMode grad(true);
    const torch::Tensor loss = torch::nn::functional::cross_entropy(x.matmul(w) + b, y) +
                               w.pow(2).sum() / (2.0 * static_cast<double>(n));
    loss.backward();
    return loss;
  };
  solver.step(objective);
  const torch::Tensor logits = emb.matmul(w.detach()) + b.detach();
  return {accuracy(logits, labels, val), accuracy(logits, labels, test)};
}

}  // namespace tessera::train
