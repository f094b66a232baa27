#include "loss.h"

#include <cmath>

#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

namespace F = torch::nn::functional;
using torch::Tensor;

// The per-score criterion l(s, y) with y = +1 for a positive, -1 (BCE: 0)
// for a negative.
Tensor criterion(const Tensor& s, bool positive, const LossOptions& o) {
  switch (o.genre) {
    case LossGenre::kLogsigmoid: return -F::logsigmoid(positive ? s : -s);
    case LossGenre::kLogistic: return F::softplus(positive ? -s : s);
    case LossGenre::kHinge: return torch::relu(o.margin - (positive ? s : -s));
    case LossGenre::kBCE:
      return F::binary_cross_entropy_with_logits(s, positive ? torch::ones_like(s) : torch::zeros_like(s),
                                                 F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
  }
  fail("internal: unknown loss genre {}", static_cast<int>(o.genre));
}

// l(s, y) and dl/ds for the fused step: the same criteria as above.
struct Criterion {
  Tensor value, slope;
};
Criterion criterion_and_slope(const Tensor& s, bool positive, const LossOptions& o) {
  if (o.genre == LossGenre::kHinge) {
    // relu(margin - s) for a positive, relu(margin + s) for a negative.
    const Tensor x = positive ? o.margin - s : o.margin + s;
    const Tensor active = (x > 0).to(s.scalar_type());
    return {torch::relu(x), positive ? -active : active};
  }
  // Logsigmoid, Logistic and BCE are all softplus(-s) for a positive and
  // softplus(s) for a negative.
  const Tensor x = positive ? -s : s;
  const Tensor sig = torch::sigmoid(x);
  return {F::softplus(x), positive ? -sig : sig};
}

void check_pairs(const Tensor& positive, const Tensor& negative) {
  if (positive.dim() != 1 || negative.dim() != 2 || negative.size(0) != positive.size(0))
    fail("KGE loss: {} positive scores and {} rows of negative scores do not pair up (expected [B] and [B, M])",
         positive.numel(), negative.dim() > 0 ? negative.size(0) : 0);
}

}  // namespace

LossGenre parse_loss_genre(const std::string& name) {
  if (name == "Logsigmoid") return LossGenre::kLogsigmoid;
  if (name == "Logistic") return LossGenre::kLogistic;
  if (name == "Hinge") return LossGenre::kHinge;
  if (name == "BCE") return LossGenre::kBCE;
  fail("unknown --loss_genre '{}' (known: Logsigmoid, Logistic, Hinge, BCE)", name);
}

void validate(const LossOptions& o) {
  if (!(o.temperature > 0) || !std::isfinite(o.temperature))
    fail("-a (adversarial temperature) must be positive, got {}", o.temperature);
  if (!(o.margin > 0) || !std::isfinite(o.margin)) fail("-m (margin) must be positive, got {}", o.margin);
  if (o.pairwise && o.adversarial) fail("-pw (pairwise loss) cannot be combined with -adv");
  if (o.pairwise && o.genre != LossGenre::kLogistic && o.genre != LossGenre::kHinge)
    fail("-pw (pairwise loss) needs --loss_genre Logistic or Hinge");
}

Loss kge_loss(const Tensor& positive, const Tensor& negative, const LossOptions& o) {
  check_pairs(positive, negative);
  Loss loss;
  if (o.pairwise) {
    loss.total = criterion(positive.unsqueeze(1) - negative, true, o).mean();
    loss.negative = loss.total.item<double>();
    return loss;
  }
  const Tensor pos = criterion(positive, true, o).mean();
  const Tensor per_negative = criterion(negative, false, o);  // [B, M]
  Tensor neg;
  if (o.adversarial) {
    // Self-adversarial weights: harder negatives count more; the weights
    // are constants, so no gradient flows through the softmax.
    const Tensor weights = torch::softmax(negative.detach() * o.temperature, 1);
    neg = (weights * per_negative).sum(1).mean();
  } else {
    neg = per_negative.mean(1).mean();
  }
  loss.total = (pos + neg) / 2;
  loss.positive = pos.item<double>();
  loss.negative = neg.item<double>();
  return loss;
}

LossGradients kge_loss_gradients(const Tensor& positive, const Tensor& negative, const LossOptions& o) {
  check_pairs(positive, negative);
  const double b = static_cast<double>(positive.size(0)), m = static_cast<double>(negative.size(1));
  LossGradients out;
  if (o.pairwise) {
    const Criterion c = criterion_and_slope(positive.unsqueeze(1) - negative, true, o);
    const Tensor slope = c.slope / (b * m);
    out.loss.total = c.value.mean();
    out.loss.negative = out.loss.total.item<double>();
    out.positive = slope.sum(1);
    out.negative = -slope;
    return out;
  }
  // In place where it can be: the [B, M] tensors are the bulk of the work.
  const Criterion pos = criterion_and_slope(positive, true, o);
  Criterion neg = criterion_and_slope(negative, false, o);
  if (o.adversarial) {
    // weights / 2B, so that the slope needs one product.
    Tensor weights = torch::softmax(o.temperature == 1 ? negative : negative * o.temperature, 1).mul_(1 / (2 * b));
    out.negative = neg.slope.mul_(weights);
    out.loss.negative = 2 * neg.value.mul_(weights).sum().item<double>();
  } else {
    out.negative = neg.slope.mul_(1 / (2 * b * m));
    out.loss.negative = neg.value.mean().item<double>();
  }
  out.loss.positive = pos.value.mean().item<double>();
  out.loss.total = torch::tensor((out.loss.positive + out.loss.negative) / 2);
  out.positive = pos.slope / (2 * b);
  return out;
}

Tensor regularization(const std::vector<Tensor>& rows, double coefficient, double p) {
  Tensor sum = torch::zeros({});
  if (coefficient <= 0 || p <= 0) return sum;
  for (const Tensor& r : rows) sum = sum + r.abs().pow(p).sum();
  return coefficient * sum;
}

}  // namespace tessera::kge
