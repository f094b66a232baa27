// How a destination's sum over its in-edges is scaled: shared by the CSR
// kernels (csr_kernels.cc) and the loader's input aggregation
// (sampling/input_aggregation.cc). Header-only, no libtorch.
#pragma once

#include <cstdint>

#include "tessera/nn/csr_reduce.h"

namespace tessera::nn::detail {

// 1/deg for mean (1 for an isolated destination), 1/(deg + 1) for gcn, 1 for sum.
inline float row_scale(CsrReduce reduce, int64_t deg) {
  switch (reduce) {
    case CsrReduce::kSum: return 1.0f;
    case CsrReduce::kMean: return deg > 0 ? 1.0f / static_cast<float>(deg) : 1.0f;
    case CsrReduce::kGcnMean: return 1.0f / static_cast<float>(deg + 1);
  }
  return 1.0f;
}

}  // namespace tessera::nn::detail
