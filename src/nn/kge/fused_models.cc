#include "fused_models.h"

#include <cmath>

namespace tessera::kge {
namespace {

// The backward loops are `omp simd`: their outputs alias only as whole rows
// (dh == dt for a self-loop), never shifted, so vector lanes cannot collide.

// gamma - ||h + r - t||_p. Queries: h + r when tails are corrupted, t - r
// when heads are (||h' - (t - r)|| = ||h' + r - t||).
class FusedTransE : public FusedModel {
 public:
  FusedTransE(int64_t dim, double gamma, int p)
      : FusedModel(dim, dim, p == 1 ? NegativeKind::kL1 : NegativeKind::kL2, gamma), p_(p) {}
  float positive(const float* h, const float* r, const float* t) const override {
    const int64_t d = entity_dim();
    float sum = 0;
    if (p_ == 1) {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < d; ++j) sum += std::fabs(h[j] + r[j] - t[j]);
      return static_cast<float>(gamma()) - sum;
    }
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      const float v = h[j] + r[j] - t[j];
      sum += v * v;
    }
    return static_cast<float>(gamma()) - std::sqrt(sum);
  }
  void positive_backward(float g, float score, const float* h, const float* r, const float* t, float* dh, float* dr,
                         float* dt) const override {
    const int64_t d = entity_dim();
    if (p_ == 1) {
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        const float v = h[j] + r[j] - t[j];
        const float dv = v > 0 ? -g : (v < 0 ? g : 0.f);
        dh[j] += dv;
        dr[j] += dv;
        dt[j] -= dv;
      }
      return;
    }
    const float norm = static_cast<float>(gamma()) - score;
    if (!(norm > 0)) return;  // the norm's gradient at 0 is taken as 0, as libtorch does
    const float scale = -g / norm;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float dv = scale * (h[j] + r[j] - t[j]);
      dh[j] += dv;
      dr[j] += dv;
      dt[j] -= dv;
    }
  }
  void query(const float* a, const float* r, bool corrupt_head, float* q) const override {
    const float sign = corrupt_head ? -1.f : 1.f;
#pragma omp simd
    for (int64_t j = 0; j < entity_dim(); ++j) q[j] = a[j] + sign * r[j];
  }
  void query_backward(const float* dq, const float*, const float*, bool corrupt_head, float* da,
                      float* dr) const override {
    const float sign = corrupt_head ? -1.f : 1.f;
#pragma omp simd
    for (int64_t j = 0; j < entity_dim(); ++j) {
      da[j] += dq[j];
      dr[j] += sign * dq[j];
    }
  }

 private:
  int p_;
};

// sum h * r * t; the query is a * r either way (symmetric).
class FusedDistMult : public FusedModel {
 public:
  explicit FusedDistMult(int64_t dim) : FusedModel(dim, dim, NegativeKind::kDot, 0) {}
  float positive(const float* h, const float* r, const float* t) const override {
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < entity_dim(); ++j) sum += h[j] * r[j] * t[j];
    return sum;
  }
  void positive_backward(float g, float /*score*/, const float* h, const float* r, const float* t, float* dh, float* dr,
                         float* dt) const override {
#pragma omp simd
    for (int64_t j = 0; j < entity_dim(); ++j) {
      const float hj = h[j], rj = r[j], tj = t[j];
      dh[j] += g * rj * tj;
      dr[j] += g * hj * tj;
      dt[j] += g * hj * rj;
    }
  }
  void query(const float* a, const float* r, bool, float* q) const override {
#pragma omp simd
    for (int64_t j = 0; j < entity_dim(); ++j) q[j] = a[j] * r[j];
  }
  void query_backward(const float* dq, const float* a, const float* r, bool, float* da, float* dr) const override {
#pragma omp simd
    for (int64_t j = 0; j < entity_dim(); ++j) {
      da[j] += dq[j] * r[j];
      dr[j] += dq[j] * a[j];
    }
  }
};

// h^T M t, M the relation row as a row-major [d x d] matrix. Queries:
// M^T h when tails are corrupted, M t when heads are.
class FusedRescal : public FusedModel {
 public:
  explicit FusedRescal(int64_t dim) : FusedModel(dim, dim * dim, NegativeKind::kDot, 0) {}
  float positive(const float* h, const float* r, const float* t) const override {
    const int64_t d = entity_dim();
    float sum = 0;
    for (int64_t i = 0; i < d; ++i) sum += h[i] * dot(r + i * d, t);
    return sum;
  }
  void positive_backward(float g, float /*score*/, const float* h, const float* r, const float* t, float* dh, float* dr,
                         float* dt) const override {
    const int64_t d = entity_dim();
    for (int64_t i = 0; i < d; ++i) {
      const float* m = r + i * d;
      float* dm = dr + i * d;
      const float gh = g * h[i];
      dh[i] += g * dot(m, t);
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) {
        dt[j] += gh * m[j];
        dm[j] += gh * t[j];
      }
    }
  }
  void query(const float* a, const float* r, bool corrupt_head, float* q) const override {
    const int64_t d = entity_dim();
    if (corrupt_head) {
      for (int64_t i = 0; i < d; ++i) q[i] = dot(r + i * d, a);
      return;
    }
    for (int64_t j = 0; j < d; ++j) q[j] = 0;
    for (int64_t i = 0; i < d; ++i) {
      const float* m = r + i * d;
      const float ai = a[i];
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) q[j] += ai * m[j];
    }
  }
  void query_backward(const float* dq, const float* a, const float* r, bool corrupt_head, float* da,
                      float* dr) const override {
    const int64_t d = entity_dim();
    for (int64_t i = 0; i < d; ++i) {
      const float* m = r + i * d;
      float* dm = dr + i * d;
      if (corrupt_head) {  // q_i = M_i . a
        const float g = dq[i];
#pragma omp simd
        for (int64_t j = 0; j < d; ++j) {
          da[j] += g * m[j];
          dm[j] += g * a[j];
        }
      } else {  // q_j = sum_i a_i M_ij
        da[i] += dot(m, dq);
        const float ai = a[i];
#pragma omp simd
        for (int64_t j = 0; j < d; ++j) dm[j] += ai * dq[j];
      }
    }
  }

 private:
  float dot(const float* x, const float* y) const {
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < entity_dim(); ++j) sum += x[j] * y[j];
    return sum;
  }
};

// Re(<h, r, conj(t)>) on rows [real | imaginary].
class FusedComplEx : public FusedModel {
 public:
  explicit FusedComplEx(int64_t dim) : FusedModel(dim, dim, NegativeKind::kDot, 0), half_(dim / 2) {}
  float positive(const float* h, const float* r, const float* t) const override {
    const int64_t d = half_;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j)
      sum += h[j] * r[j] * t[j] + h[d + j] * r[j] * t[d + j] + h[j] * r[d + j] * t[d + j] -
             h[d + j] * r[d + j] * t[j];
    return sum;
  }
  void positive_backward(float g, float /*score*/, const float* h, const float* r, const float* t, float* dh, float* dr,
                         float* dt) const override {
    const int64_t d = half_;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float hr = h[j], hi = h[d + j], rr = r[j], ri = r[d + j], tr = t[j], ti = t[d + j];
      dh[j] += g * (rr * tr + ri * ti);
      dh[d + j] += g * (rr * ti - ri * tr);
      dr[j] += g * (hr * tr + hi * ti);
      dr[d + j] += g * (hr * ti - hi * tr);
      dt[j] += g * (hr * rr - hi * ri);
      dt[d + j] += g * (hi * rr + hr * ri);
    }
  }
  // The score's coefficients on the corrupted entity's real and imaginary parts.
  void query(const float* a, const float* r, bool corrupt_head, float* q) const override {
    const int64_t d = half_;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float ar = a[j], ai = a[d + j], rr = r[j], ri = r[d + j];
      q[j] = corrupt_head ? rr * ar + ri * ai : ar * rr - ai * ri;
      q[d + j] = corrupt_head ? rr * ai - ri * ar : ai * rr + ar * ri;
    }
  }
  void query_backward(const float* dq, const float* a, const float* r, bool corrupt_head, float* da,
                      float* dr) const override {
    const int64_t d = half_;
    const float s = corrupt_head ? -1.f : 1.f;  // the sign of the ri terms
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float ar = a[j], ai = a[d + j], rr = r[j], ri = r[d + j], qr = dq[j], qi = dq[d + j];
      da[j] += qr * rr + s * qi * ri;
      da[d + j] += -s * qr * ri + qi * rr;
      dr[j] += qr * ar + qi * ai;
      dr[d + j] += s * (qi * ar - qr * ai);
    }
  }

 private:
  int64_t half_;
};

// gamma - sum_j |h_j r_j - t_j| with complex entities [re | im] and unit
// relations r_j = exp(i phase_j); work rows hold [cos | sin] of the phases.
class FusedRotatE : public FusedModel {
 public:
  FusedRotatE(int64_t hidden, double gamma)
      : FusedModel(2 * hidden, hidden, NegativeKind::kComplexL1, gamma),
        d_(hidden),
        phase_scale_(M_PI / ((gamma + 2.0) / hidden)) {}
  bool transforms_relations() const override { return true; }
  int64_t work_dim() const override { return 2 * d_; }
  void to_work(const float* stored, float* work) const override {
    for (int64_t j = 0; j < d_; ++j) {
      const float phase = static_cast<float>(stored[j] * phase_scale_);
      work[j] = std::cos(phase);
      work[d_ + j] = std::sin(phase);
    }
  }
  // d/d phase of (cos, sin) is (-sin, cos): the work row already holds both.
  void from_work_grad(const float* work, const float* work_grad, float* grad) const override {
    const float scale = static_cast<float>(phase_scale_);
#pragma omp simd
    for (int64_t j = 0; j < d_; ++j) grad[j] += scale * (work_grad[d_ + j] * work[j] - work_grad[j] * work[d_ + j]);
  }
  float positive(const float* h, const float* r, const float* t) const override {
    const int64_t d = d_;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      const float re = h[j] * r[j] - h[d + j] * r[d + j] - t[j], im = h[j] * r[d + j] + h[d + j] * r[j] - t[d + j];
      // clamp: sqrt has an infinite slope at 0 (as the autograd form).
      sum += std::sqrt(std::max(re * re + im * im, 1e-30f));
    }
    return static_cast<float>(gamma()) - sum;
  }
  void positive_backward(float g, float /*score*/, const float* h, const float* r, const float* t, float* dh, float* dr,
                         float* dt) const override {
    const int64_t d = d_;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float hr = h[j], hi = h[d + j], c = r[j], s = r[d + j];
      const float re = hr * c - hi * s - t[j], im = hr * s + hi * c - t[d + j];
      const float x = re * re + im * im;
      if (!(x >= 1e-30f)) continue;
      const float scale = -g / std::sqrt(x);
      const float gre = scale * re, gim = scale * im;
      dh[j] += gre * c + gim * s;
      dh[d + j] += gim * c - gre * s;
      dt[j] -= gre;
      dt[d + j] -= gim;
      dr[j] += gre * hr + gim * hi;      // d / d cos
      dr[d + j] += gim * hr - gre * hi;  // d / d sin
    }
  }
  // Tail corrupted: h o r; head corrupted: t o conj(r) (|h' o r - t| = |h' - t o conj(r)| as |r| = 1).
  void query(const float* a, const float* r, bool corrupt_head, float* q) const override {
    const int64_t d = d_;
    const float s = corrupt_head ? -1.f : 1.f;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float ar = a[j], ai = a[d + j], c = r[j], sn = s * r[d + j];
      q[j] = ar * c - ai * sn;
      q[d + j] = ar * sn + ai * c;
    }
  }
  void query_backward(const float* dq, const float* a, const float* r, bool corrupt_head, float* da,
                      float* dr) const override {
    const int64_t d = d_;
    const float s = corrupt_head ? -1.f : 1.f;
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) {
      const float ar = a[j], ai = a[d + j], c = r[j], sn = s * r[d + j], qr = dq[j], qi = dq[d + j];
      da[j] += qr * c + qi * sn;
      da[d + j] += qi * c - qr * sn;
      dr[j] += qr * ar + qi * ai;
      dr[d + j] += s * (qi * ar - qr * ai);
    }
  }

 private:
  int64_t d_;
  double phase_scale_;
};

}  // namespace

std::unique_ptr<FusedModel> make_fused_model(const ScoreOptions& o) {
  const int64_t d = o.hidden_dim;
  switch (o.model) {
    case Model::kTransE_l1: return std::make_unique<FusedTransE>(d, o.gamma, 1);
    case Model::kTransE_l2: return std::make_unique<FusedTransE>(d, o.gamma, 2);
    case Model::kDistMult: return std::make_unique<FusedDistMult>(d);
    case Model::kRESCAL: return std::make_unique<FusedRescal>(d);
    case Model::kComplEx: return std::make_unique<FusedComplEx>(o.double_entity ? 2 * d : d);
    case Model::kRotatE: return std::make_unique<FusedRotatE>(d, o.gamma);
    default: return nullptr;
  }
}

}  // namespace tessera::kge
