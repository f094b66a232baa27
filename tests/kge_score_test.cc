// KGE score functions: each model's positive score and its gradients against
// an independent libtorch formula (complex tensors for the complex models),
// and the chunked negative scores (matrix products, broadcasting) against
// the positive score of every (positive, negative) pair spelt out, for both
// head and tail corruption, gradients included.
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nn/kge/score_function.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

using torch::Tensor;

constexpr double kGamma = 6.0;
constexpr int64_t kHidden = 6;

struct Case {
  std::string model;
  bool de = false, dr = false;
  // The direct formula: h, r, t -> score per row.
  std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> reference;
};

Tensor as_complex(const Tensor& x) {
  const int64_t d = x.size(-1) / 2;
  return torch::complex(x.narrow(-1, 0, d), x.narrow(-1, d, d));
}

std::vector<Case> cases() {
  return {
      {"TransE_l1", false, false, [](auto& h, auto& r, auto& t) { return kGamma - (h + r - t).abs().sum(-1); }},
      {"TransE_l2", false, false,
       [](auto& h, auto& r, auto& t) { return kGamma - (h + r - t).pow(2).sum(-1).sqrt(); }},
      {"DistMult", false, false, [](auto& h, auto& r, auto& t) { return (h * r * t).sum(-1); }},
      {"ComplEx", false, false,
       [](auto& h, auto& r, auto& t) {
         return torch::real((as_complex(h) * as_complex(r) * torch::conj(as_complex(t))).sum(-1));
       }},
      {"RotatE", true, false,
       [](auto& h, auto& r, auto& t) {
         const double phase_scale = M_PI / ((kGamma + 2.0) / kHidden);
         const Tensor rotation = torch::polar(torch::ones_like(r), r * phase_scale);
         return kGamma - (as_complex(h) * rotation - as_complex(t)).abs().sum(-1);
       }},
      {"RESCAL", false, false,
       [](auto& h, auto& r, auto& t) {
         return torch::einsum("bi,bij,bj->b", {h, r.view({-1, kHidden, kHidden}), t});
       }},
      {"TransR", false, false,
       [](auto& h, auto& r, auto& t) {
         const Tensor m = r.narrow(-1, kHidden, kHidden * kHidden).reshape({-1, kHidden, kHidden});
         const Tensor hp = torch::einsum("bi,bij->bj", {h, m}), tp = torch::einsum("bi,bij->bj", {t, m});
         return kGamma - (hp + r.narrow(-1, 0, kHidden) - tp).abs().sum(-1);
       }},
      {"SimplE", false, false,
       [](auto& h, auto& r, auto& t) {
         const int64_t d = kHidden / 2;
         const Tensor forward = (h.narrow(-1, 0, d) * r.narrow(-1, 0, d) * t.narrow(-1, d, d)).sum(-1);
         const Tensor inverse = (t.narrow(-1, 0, d) * r.narrow(-1, d, d) * h.narrow(-1, d, d)).sum(-1);
         return ((forward + inverse) / 2).clamp(-20, 20);
       }},
  };
}

std::unique_ptr<ScoreFunction> make(const Case& c) {
  ScoreOptions o;
  o.model = parse_model(c.model);
  o.hidden_dim = kHidden;
  o.gamma = kGamma;
  o.double_entity = c.de;
  o.double_relation = c.dr;
  return make_score_function(o);
}

std::vector<Tensor> gradients(const Tensor& out, const Tensor& weights, const std::vector<Tensor>& inputs) {
  return torch::autograd::grad({(out * weights).sum()}, inputs);
}

TEST(KgeScore, PositiveScoresAndGradientsMatchADirectFormula) {
  torch::manual_seed(1);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.model);
    const auto f = make(c);
    const int64_t b = 7;
    const Tensor h = torch::randn({b, f->entity_dim()}, torch::requires_grad());
    const Tensor r = torch::randn({b, f->relation_dim()}, torch::requires_grad());
    const Tensor t = torch::randn({b, f->entity_dim()}, torch::requires_grad());
    const Tensor weights = torch::randn({b});
    const Tensor ours = f->positive(h, r, t), theirs = c.reference(h, r, t);
    ASSERT_EQ(ours.sizes(), theirs.sizes());
    EXPECT_TRUE(torch::allclose(ours, theirs, 1e-5, 1e-5)) << ours << theirs;
    const auto g1 = gradients(ours, weights, {h, r, t}), g2 = gradients(theirs, weights, {h, r, t});
    for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(torch::allclose(g1[k], g2[k], 1e-4, 1e-5)) << "gradient " << k;
  }
}

TEST(KgeScore, ChunkedNegativesEqualEveryPairScoredOneByOne) {
  torch::manual_seed(2);
  const int64_t chunks = 2, per_chunk = 3, negatives = 5;
  for (const Case& c : cases()) {
    for (const bool corrupt_head : {false, true}) {
      SCOPED_TRACE(c.model + (corrupt_head ? " head corrupted" : " tail corrupted"));
      const auto f = make(c);
      const int64_t e = f->entity_dim(), rd = f->relation_dim();
      const Tensor anchor = torch::randn({chunks, per_chunk, e}, torch::requires_grad());
      const Tensor r = torch::randn({chunks, per_chunk, rd}, torch::requires_grad());
      const Tensor negs = torch::randn({chunks, negatives, e}, torch::requires_grad());
      const Tensor ours = f->negative(anchor, r, negs, corrupt_head);
      ASSERT_EQ(ours.sizes(), (std::vector<int64_t>{chunks, per_chunk, negatives}));

      // Every (positive, negative) pair as its own triple.
      const Tensor kept = anchor.unsqueeze(2).expand({chunks, per_chunk, negatives, e}).reshape({-1, e});
      const Tensor rel = r.unsqueeze(2).expand({chunks, per_chunk, negatives, rd}).reshape({-1, rd});
      const Tensor cand = negs.unsqueeze(1).expand({chunks, per_chunk, negatives, e}).reshape({-1, e});
      const Tensor theirs = (corrupt_head ? f->positive(cand, rel, kept) : f->positive(kept, rel, cand))
                                .view({chunks, per_chunk, negatives});
      EXPECT_TRUE(torch::allclose(ours, theirs, 1e-4, 1e-4)) << ours << theirs;
      const Tensor weights = torch::randn({chunks, per_chunk, negatives});
      const auto g1 = gradients(ours, weights, {anchor, r, negs}), g2 = gradients(theirs, weights, {anchor, r, negs});
      for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(torch::allclose(g1[k], g2[k], 1e-3, 1e-4)) << "gradient " << k;
    }
  }
}

TEST(KgeScore, BadModelOptionsAreClearErrors) {
  try {
    parse_model("TransH");
    FAIL() << "TransH should be unknown";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model 'TransH' (known: TransE_l1, TransE_l2, DistMult"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_model("TransE"), Model::kTransE_l2);
  ScoreOptions o;
  o.model = Model::kDistMult;
  o.hidden_dim = 0;
  EXPECT_THROW(make_score_function(o), Error);
  o.model = Model::kRotatE;
  o.hidden_dim = 8;
  EXPECT_THROW(make_score_function(o), Error) << "RotatE without -de";
  o.model = Model::kComplEx;
  o.hidden_dim = 7;
  EXPECT_THROW(make_score_function(o), Error) << "odd width cannot split into real and imaginary halves";
}

}  // namespace
}  // namespace tessera::kge
