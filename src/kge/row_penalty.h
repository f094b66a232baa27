// The -rc / -rn penalty of one embedding row, as DGL-KE defines it: the sum
// of |x|^p over the row's values, with its gradient. Shared by the steps
// that write their gradients by hand (fused_step.h, all_entities_step.h).
#pragma once

#include <cstdint>

namespace tessera::kge {

// sum |x|^p over x[0, d), and `scale` * d/dx of it added into `grad`.
float penalty_row(const float* x, int64_t d, double p, float scale, float* grad);

}  // namespace tessera::kge
