// Adam's element update over raw buffers, shared by the dense optimizer
// (train::FusedAdam) and the servers' sparse row update (store::adam_rows),
// in the order and precision of torch's ops (float arithmetic, the caller's
// double scalars rounded to float once):
//   g += weight_decay * w;  m = m * beta1 + (1 - beta1) * g;
//   v = v * beta2 + (1 - beta2) * g * g;  w -= step_size * m / (sqrt(v) / bias2_sqrt + eps)
// with step_size = lr / (1 - beta1^t) and bias2_sqrt = sqrt(1 - beta2^t).
// Compiled where it is included; both users are in the host-tuned kernel
// library. w, g, m and v must not overlap.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera {

struct AdamStep {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  float step_size, bias2_sqrt;
  float weight_decay = 0.0f;
};

inline void adam_update(int64_t n, float* __restrict w, const float* __restrict grad, float* __restrict m,
                        float* __restrict v, const AdamStep& s) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float g = s.weight_decay != 0.0f ? grad[i] + s.weight_decay * w[i] : grad[i];
    const float mi = m[i] * s.beta1 + s.one_minus_beta1 * g;
    const float vi = v[i] * s.beta2 + s.one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    w[i] -= s.step_size * mi / (std::sqrt(vi) / s.bias2_sqrt + s.eps);
  }
}

}  // namespace tessera
