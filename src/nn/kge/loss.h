// DGL-KE's training losses for knowledge-graph embeddings: Logsigmoid (the
// default), Logistic, Hinge and BCE over a batch's positive scores and its
// chunked negative scores, optionally self-adversarial (-adv: negatives
// weighted by a softmax of their own scores at temperature -a, the weights
// held constant) or pairwise (-pw), and the -rc / -rn penalty on the rows a
// batch used.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace tessera::kge {

enum class LossGenre { kLogsigmoid, kLogistic, kHinge, kBCE };

// --loss_genre names; errors list the known ones.
LossGenre parse_loss_genre(const std::string& name);

struct LossOptions {
  LossGenre genre = LossGenre::kLogsigmoid;
  double margin = 1.0;        // -m, Hinge only
  bool adversarial = false;   // -adv
  double temperature = 1.0;   // -a
  bool pairwise = false;      // -pw: Logistic or Hinge on s+ - s-, no -adv
};

// Throws naming the bad combination (pairwise with -adv or a loss it does
// not take, a temperature or margin that is not finite and positive).
void validate(const LossOptions& options);

struct Loss {
  torch::Tensor total;      // what backward() runs on
  double positive = 0;      // the positive part, for logs (0 when pairwise)
  double negative = 0;      // the negative part, for logs
};

// positive: [B]; negative: [B, M] (M negatives per positive). Not pairwise:
// (mean_b l(s+_b) + mean_b weighted-mean_m l(s-_bm)) / 2; pairwise: the mean
// of l(s+_b - s-_bm) over every (b, m).
Loss kge_loss(const torch::Tensor& positive, const torch::Tensor& negative, const LossOptions& options);

// The same loss with its gradients worked out by hand, for the fused step
// (no autograd graph): d total / d positive and d total / d negative, shaped
// as the scores. Same math as kge_loss; the weights of -adv are constants.
struct LossGradients {
  Loss loss;
  torch::Tensor positive, negative;
};
LossGradients kge_loss_gradients(const torch::Tensor& positive, const torch::Tensor& negative,
                                 const LossOptions& options);

// coefficient * sum over `rows` of sum |x|^p (-rc, -rn): the rows a batch
// gathered, repeats included, not averaged.
torch::Tensor regularization(const std::vector<torch::Tensor>& rows, double coefficient, double p);

}  // namespace tessera::kge
