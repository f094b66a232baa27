#include "score_function.h"

#include "distance_kernels.h"

#include <cmath>

#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

using torch::Tensor;

struct ModelName {
  Model model;
  const char* name;
};
constexpr ModelName kModels[] = {{Model::kTransE_l1, "TransE_l1"}, {Model::kTransE_l2, "TransE_l2"},
                                 {Model::kDistMult, "DistMult"},   {Model::kComplEx, "ComplEx"},
                                 {Model::kRotatE, "RotatE"},       {Model::kRESCAL, "RESCAL"},
                                 {Model::kTransR, "TransR"},       {Model::kSimplE, "SimplE"}};

// Real and imaginary halves of complex rows.
std::pair<Tensor, Tensor> halves(const Tensor& x) {
  const int64_t d = x.size(-1) / 2;
  return {x.narrow(-1, 0, d), x.narrow(-1, d, d)};
}

// ||a_k - b_n||_p for every k, n: a [C, K, D], b [C, N, D] -> [C, K, N].
Tensor pairwise_distance(const Tensor& a, const Tensor& b, int p) {
  if (p == 2) {
    // |a|^2 + |b|^2 - 2 a.b: one batched product instead of C*K*N*D differences.
    const Tensor a2 = a.pow(2).sum(-1, true);                 // [C, K, 1]
    const Tensor b2 = b.pow(2).sum(-1).unsqueeze(1);          // [C, 1, N]
    const Tensor ab = torch::bmm(a, b.transpose(1, 2));       // [C, K, N]
    return (a2 + b2 - 2 * ab).clamp_min(1e-30).sqrt();
  }
  return pairwise_l1(a, b);
}

// Scores linear in the corrupted entity: score = q . e for a query q built
// from the kept entity and the relation. Negatives are then one bmm.
Tensor linear_negatives(const Tensor& query, const Tensor& negatives) {
  return torch::bmm(query, negatives.transpose(1, 2));
}

class TransE : public ScoreFunction {
 public:
  TransE(int64_t dim, double gamma, int p) : ScoreFunction(dim, dim), gamma_(gamma), p_(p) {}
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    return gamma_ - (h + r - t).norm(p_, -1);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    // Tail corrupted: ||(h + r) - t'||; head corrupted: ||h' - (t - r)||.
    return gamma_ - pairwise_distance(corrupt_head ? anchor - r : anchor + r, negatives, p_);
  }

 private:
  double gamma_;
  int p_;
};

class DistMult : public ScoreFunction {
 public:
  explicit DistMult(int64_t dim) : ScoreFunction(dim, dim) {}
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override { return (h * r * t).sum(-1); }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool) const override {
    return linear_negatives(anchor * r, negatives);  // symmetric in head and tail
  }
};

class ComplEx : public ScoreFunction {
 public:
  explicit ComplEx(int64_t dim) : ScoreFunction(dim, dim) {}
  // Re(<h, r, conj(t)>).
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    const auto [hr, hi] = halves(h);
    const auto [rr, ri] = halves(r);
    const auto [tr, ti] = halves(t);
    return (hr * rr * tr + hi * rr * ti + hr * ri * ti - hi * ri * tr).sum(-1);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    const auto [ar, ai] = halves(anchor);
    const auto [rr, ri] = halves(r);
    // The score's coefficients on the corrupted entity's real and imaginary parts.
    const Tensor query = corrupt_head ? torch::cat({rr * ar + ri * ai, rr * ai - ri * ar}, -1)
                                      : torch::cat({ar * rr - ai * ri, ai * rr + ar * ri}, -1);
    return linear_negatives(query, negatives);
  }
};

class RotatE : public ScoreFunction {
 public:
  RotatE(int64_t hidden, double gamma)
      : ScoreFunction(2 * hidden, hidden), gamma_(gamma), phase_scale_(M_PI / ((gamma + 2.0) / hidden)) {}
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    const auto [hr, hi] = halves(h);
    const auto [tr, ti] = halves(t);
    const Tensor phase = r * phase_scale_;
    const Tensor cr = phase.cos(), ci = phase.sin();
    const Tensor re = hr * cr - hi * ci - tr, im = hr * ci + hi * cr - ti;
    // clamp: sqrt has an infinite slope at 0, and one such element would
    // turn the whole row NaN through row-wise Adagrad.
    return gamma_ - (re * re + im * im).clamp_min(1e-30).sqrt().sum(-1);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    const auto [ar, ai] = halves(anchor);
    const Tensor phase = r * phase_scale_;
    const Tensor cr = phase.cos(), ci = phase.sin();
    // Tail corrupted: |h o r - t'|; head corrupted: |h' o r - t| = |h' - t o conj(r)|
    // since |r| = 1.
    const Tensor qr = corrupt_head ? ar * cr + ai * ci : ar * cr - ai * ci;
    const Tensor qi = corrupt_head ? ai * cr - ar * ci : ar * ci + ai * cr;
    const auto [nr, ni] = halves(negatives);
    return gamma_ - pairwise_complex_l1(qr, qi, nr, ni);
  }

 private:
  double gamma_, phase_scale_;
};

class Rescal : public ScoreFunction {
 public:
  explicit Rescal(int64_t dim) : ScoreFunction(dim, dim * dim), dim_(dim) {}
  // h^T M_r t.
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    const Tensor m = r.view({-1, dim_, dim_});
    return (h * torch::bmm(m, t.unsqueeze(-1)).squeeze(-1)).sum(-1);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    const int64_t c = anchor.size(0), k = anchor.size(1);
    const Tensor m = r.reshape({c * k, dim_, dim_});
    const Tensor a = anchor.reshape({c * k, dim_, 1});
    // Tail corrupted: (h^T M) t'; head corrupted: h'^T (M t).
    const Tensor query = corrupt_head ? torch::bmm(m, a) : torch::bmm(m.transpose(1, 2), a);
    return linear_negatives(query.view({c, k, dim_}), negatives);
  }

 private:
  int64_t dim_;
};

class TransR : public ScoreFunction {
 public:
  TransR(int64_t dim, double gamma) : ScoreFunction(dim, dim + dim * dim), dim_(dim), gamma_(gamma) {}
  // gamma - ||h M_r + r - t M_r||_1, with the relation row [r | M_r].
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    const Tensor m = projection(r).view({-1, dim_, dim_});
    const Tensor hp = torch::bmm(h.unsqueeze(1), m).squeeze(1), tp = torch::bmm(t.unsqueeze(1), m).squeeze(1);
    return gamma_ - (hp + translation(r) - tp).norm(1, -1);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    // Each positive projects the shared negatives with its own relation.
    const Tensor m = projection(r).reshape({r.size(0), r.size(1), dim_, dim_});   // [C, K, D, D]
    const Tensor ap = torch::einsum("ckd,ckde->cke", {anchor, m});                 // [C, K, D]
    const Tensor np = torch::einsum("cnd,ckde->ckne", {negatives, m});             // [C, K, N, D]
    const Tensor kept = corrupt_head ? ap - translation(r) : ap + translation(r);  // [C, K, D]
    return gamma_ - (kept.unsqueeze(2) - np).abs().sum(-1);
  }
  int64_t negative_pair_elements() const override { return 2 * dim_; }

 private:
  Tensor translation(const Tensor& r) const { return r.narrow(-1, 0, dim_); }
  Tensor projection(const Tensor& r) const { return r.narrow(-1, dim_, dim_ * dim_); }
  int64_t dim_;
  double gamma_;
};

class SimplE : public ScoreFunction {
 public:
  explicit SimplE(int64_t dim) : ScoreFunction(dim, dim) {}
  // Entity rows [as head | as tail], relation rows [r | r_inverse]:
  // (<h_head, r, t_tail> + <t_head, r_inverse, h_tail>) / 2, clamped to [-20, 20].
  Tensor positive(const Tensor& h, const Tensor& r, const Tensor& t) const override {
    const auto [hh, ht] = halves(h);
    const auto [rf, ri] = halves(r);
    const auto [th, tt] = halves(t);
    return ((hh * rf * tt + th * ri * ht).sum(-1) / 2).clamp(-20, 20);
  }
  Tensor negative(const Tensor& anchor, const Tensor& r, const Tensor& negatives, bool corrupt_head) const override {
    const auto [ah, at] = halves(anchor);
    const auto [rf, ri] = halves(r);
    // Coefficients on the corrupted entity's [as head | as tail] halves.
    const Tensor query = corrupt_head ? torch::cat({rf * at, ri * ah}, -1) : torch::cat({ri * at, rf * ah}, -1);
    return (linear_negatives(query, negatives) / 2).clamp(-20, 20);
  }
};

}  // namespace

Model parse_model(const std::string& name) {
  if (name == "TransE") return Model::kTransE_l2;  // DGL-KE's alias
  for (const ModelName& m : kModels)
    if (name == m.name) return m.model;
  std::string known;
  for (const ModelName& m : kModels) known += (known.empty() ? "" : ", ") + std::string(m.name);
  fail("unknown model '{}' (known: {})", name, known);
}

std::string model_name(Model model) {
  for (const ModelName& m : kModels)
    if (m.model == model) return m.name;
  fail("internal: unnamed model {}", static_cast<int>(model));
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ModelName& m : kModels) names.emplace_back(m.name);
  return names;
}

std::unique_ptr<ScoreFunction> make_score_function(const ScoreOptions& o) {
  if (o.hidden_dim < 1) fail("--hidden_dim must be at least 1 (got {})", o.hidden_dim);
  const int64_t d = o.hidden_dim;
  // As in DGL-KE: rows are hidden_dim wide, twice that with -de / -dr;
  // complex models split a row into real and imaginary halves.
  const int64_t entity = o.double_entity ? 2 * d : d, relation = o.double_relation ? 2 * d : d;
  const std::string name = model_name(o.model);
  auto need_even = [&](int64_t width, const char* what) {
    if (width % 2 != 0) fail("{} splits {} rows in halves: their width ({}) must be even", name, what, width);
  };
  switch (o.model) {
    case Model::kTransE_l1:
    case Model::kTransE_l2:
    case Model::kDistMult:
    case Model::kRESCAL:
    case Model::kTransR:
      if (o.double_entity || o.double_relation) fail("{} takes neither -de nor -dr", name);
      if (o.model == Model::kTransE_l1) return std::make_unique<TransE>(d, o.gamma, 1);
      if (o.model == Model::kTransE_l2) return std::make_unique<TransE>(d, o.gamma, 2);
      if (o.model == Model::kDistMult) return std::make_unique<DistMult>(d);
      if (o.model == Model::kRESCAL) return std::make_unique<Rescal>(d);
      return std::make_unique<TransR>(d, o.gamma);
    case Model::kComplEx:
    case Model::kSimplE:
      if (entity != relation) fail("{} needs entity and relation rows of one width: give both -de and -dr or neither", name);
      need_even(entity, "entity");
      if (o.model == Model::kComplEx) return std::make_unique<ComplEx>(entity);
      return std::make_unique<SimplE>(entity);
    case Model::kRotatE:
      if (!o.double_entity || o.double_relation)
        fail("RotatE needs -de and not -dr (complex entities twice --hidden_dim wide, one phase per dimension)");
      return std::make_unique<RotatE>(d, o.gamma);
  }
  fail("internal: model {} has no score function", static_cast<int>(o.model));
}

}  // namespace tessera::kge
