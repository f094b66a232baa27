// The pass behind cross_entropy (tessera/nn/cross_entropy.h) on raw buffers, for a step that runs its loss
// without autograd (tessera/nn/sage_step.h): the same arithmetic, so the same bits.
#pragma once

#include <cstdint>

namespace tessera::nn::detail {

struct CrossEntropyResult {
  double loss = 0;      // the mean over the counted rows (NaN when none)
  int64_t correct = 0;  // rows whose first maximal logit is at the label
};

// Softmax cross-entropy of logits x [n x c] at labels (each in [0, c) or
// -100, ignored; any other throws tessera::Error naming the row) and, when
// grad is not null, d(loss)/d(x) written into grad [n x c].
CrossEntropyResult softmax_cross_entropy(const float* x, const int64_t* labels, int64_t n, int64_t c, float* grad);

}  // namespace tessera::nn::detail
