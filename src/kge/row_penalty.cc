#include "row_penalty.h"

#include <cmath>

namespace tessera::kge {

float penalty_row(const float* x, int64_t d, double p, float scale, float* grad) {
  float sum = 0;
  if (p == 3) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      const float a = std::fabs(x[j]);
      sum += a * a * a;
      grad[j] += scale * 3 * x[j] * a;
    }
  } else if (p == 2) {
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < d; ++j) {
      sum += x[j] * x[j];
      grad[j] += scale * 2 * x[j];
    }
  } else {
    const float pf = static_cast<float>(p);
    for (int64_t j = 0; j < d; ++j) {
      const float a = std::fabs(x[j]);
      sum += std::pow(a, pf);
      const float sign = x[j] > 0 ? 1.f : (x[j] < 0 ? -1.f : 0.f);
      grad[j] += scale * pf * std::pow(a, pf - 1) * sign;
    }
  }
  return sum;
}

}  // namespace tessera::kge
