#include "chunk_scorer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "distance_kernels.h"

namespace tessera::kge {
namespace {

using torch::Tensor;

// [chunks, rows, d] views of a plain buffer, for batched GEMMs.
Tensor view3(const float* data, int64_t chunks, int64_t rows, int64_t d) {
  return torch::from_blob(const_cast<float*>(data), {chunks, rows, d}, torch::kFloat32);
}

// out[c] = a[c] x b[c]^T (or a[c]^T x b[c]), into `out`'s memory.
void batched_product(Tensor out, const Tensor& a, const Tensor& b) { torch::bmm_out(out, a, b); }

void squared_norms(const float* rows, int64_t count, int64_t d, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    const float* r = rows + i * d;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) sum += r[j] * r[j];
    out[i] = sum;
  }
}

}  // namespace

void ChunkScorer::forward(const float* q, const float* neg, const ChunkShape& s, float* scores) {
  const Tensor queries = view3(q, s.chunks, s.k, s.d), negatives = view3(neg, s.chunks, s.n, s.d);
  Tensor out = view3(scores, s.chunks, s.k, s.n);
  const int64_t rows = s.chunks * s.k;
  switch (kind_) {
    case NegativeKind::kDot: batched_product(out, queries, negatives.transpose(1, 2)); return;
    case NegativeKind::kL2: {
      batched_product(out, queries, negatives.transpose(1, 2));
      query_norm_.resize(rows);
      negative_norm_.resize(s.chunks * s.n);
      distance_.resize(rows * s.n);
      squared_norms(q, rows, s.d, query_norm_.data());
      squared_norms(neg, s.chunks * s.n, s.d, negative_norm_.data());
      for (int64_t c = 0; c < s.chunks; ++c)
        for (int64_t k = 0; k < s.k; ++k) {
          const int64_t row = c * s.k + k;
          const float qn = query_norm_[row];
          const float* nn = negative_norm_.data() + c * s.n;
          float* o = scores + row * s.n;
          float* dist = distance_.data() + row * s.n;
          // A squared distance below 1e-30 (rounding) is clamped there, as
          // the autograd form does, and then carries no gradient.
#pragma omp simd
          for (int64_t n = 0; n < s.n; ++n) {
            const float x = qn + nn[n] - 2 * o[n];
            dist[n] = x >= 1e-30f ? std::sqrt(x) : -std::sqrt(1e-30f);  // negative: clamped
            o[n] = gamma_ - std::fabs(dist[n]);
          }
        }
      return;
    }
    case NegativeKind::kL1:
    case NegativeKind::kComplexL1: {
      const PairShape p = kind_ == NegativeKind::kL1 ? PairShape{s.chunks, s.k, s.n, s.d}
                                                     : PairShape{s.chunks, s.k, s.n, s.d / 2};
      const int64_t half = s.d / 2;
      const RowBlock a = kind_ == NegativeKind::kL1 ? RowBlock{q, nullptr, s.d} : RowBlock{q, q + half, s.d};
      const RowBlock b = kind_ == NegativeKind::kL1 ? RowBlock{neg, nullptr, s.d} : RowBlock{neg, neg + half, s.d};
      l1_distances(a, b, p, scores);
      for (int64_t i = 0; i < rows * s.n; ++i) scores[i] = gamma_ - scores[i];
      return;
    }
  }
}

void ChunkScorer::backward(const float* q, const float* neg, const float* grad, const ChunkShape& s, float* dq,
                           float* dn) {
  const Tensor queries = view3(q, s.chunks, s.k, s.d), negatives = view3(neg, s.chunks, s.n, s.d);
  const int64_t rows = s.chunks * s.k;
  switch (kind_) {
    case NegativeKind::kDot: {
      const Tensor g = view3(grad, s.chunks, s.k, s.n);
      batched_product(view3(dq, s.chunks, s.k, s.d), g, negatives);
      batched_product(view3(dn, s.chunks, s.n, s.d), g.transpose(1, 2), queries);
      return;
    }
    case NegativeKind::kL2: {
      // score = gamma - sqrt(|q|^2 + |n|^2 - 2 q.n). With h = g / dist:
      // dq_k = sum_n h_kn n_n - q_k sum_n h_kn, dn_n = sum_k h_kn q_k - n_n sum_k h_kn.
      scaled_grad_.resize(rows * s.n);
      float* h = scaled_grad_.data();
      const float* dist = distance_.data();
#pragma omp simd
      for (int64_t i = 0; i < rows * s.n; ++i) h[i] = dist[i] > 0 ? grad[i] / dist[i] : 0.f;
      const Tensor ht = view3(h, s.chunks, s.k, s.n);
      batched_product(view3(dq, s.chunks, s.k, s.d), ht, negatives);
      batched_product(view3(dn, s.chunks, s.n, s.d), ht.transpose(1, 2), queries);
      std::vector<float>& col = negative_norm_;  // reused: its norms are no longer needed
      std::fill(col.begin(), col.end(), 0.f);
      for (int64_t c = 0; c < s.chunks; ++c)
        for (int64_t k = 0; k < s.k; ++k) {
          const int64_t row = c * s.k + k;
          const float* hr = h + row * s.n;
          float* chunk_col = col.data() + c * s.n;
          float sum = 0;
#pragma omp simd reduction(+ : sum)
          for (int64_t n = 0; n < s.n; ++n) {
            sum += hr[n];
            chunk_col[n] += hr[n];
          }
          float* d = dq + row * s.d;
          const float* x = q + row * s.d;
#pragma omp simd
          for (int64_t j = 0; j < s.d; ++j) d[j] -= x[j] * sum;
        }
      for (int64_t i = 0; i < s.chunks * s.n; ++i) {
        float* d = dn + i * s.d;
        const float* x = neg + i * s.d;
        const float sum = col[i];
#pragma omp simd
        for (int64_t j = 0; j < s.d; ++j) d[j] -= x[j] * sum;
      }
      return;
    }
    case NegativeKind::kL1:
    case NegativeKind::kComplexL1: {
      // score = gamma - distance: the kernels get -grad.
      scaled_grad_.resize(rows * s.n);
      float* negated = scaled_grad_.data();
#pragma omp simd
      for (int64_t i = 0; i < rows * s.n; ++i) negated[i] = -grad[i];
      std::memset(dq, 0, sizeof(float) * rows * s.d);
      std::memset(dn, 0, sizeof(float) * s.chunks * s.n * s.d);
      const int64_t half = s.d / 2;
      if (kind_ == NegativeKind::kL1)
        l1_distances_backward({q, nullptr, s.d}, {neg, nullptr, s.d}, scaled_grad_.data(), {s.chunks, s.k, s.n, s.d},
                              {dq, nullptr, s.d}, {dn, nullptr, s.d});
      else
        l1_distances_backward({q, q + half, s.d}, {neg, neg + half, s.d}, scaled_grad_.data(),
                              {s.chunks, s.k, s.n, half}, {dq, dq + half, s.d}, {dn, dn + half, s.d});
      return;
    }
  }
}

}  // namespace tessera::kge
