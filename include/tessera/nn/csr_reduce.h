// How a CSR block's destinations reduce their in-edges' source rows: the choice that csr_aggregate(),
// fused_sage_conv() and a loader's input aggregation (sampling/data_loader.h) share. Header-only, no libtorch.
#pragma once

namespace tessera::nn {

enum class CsrReduce {
  kSum,      // out[d] = sum of x[indices[e]]
  kMean,     // out[d] = that sum / deg(d); zero row when deg(d) == 0
  kGcnMean,  // out[d] = (that sum + x[d]) / (deg(d) + 1), DGL's "gcn" aggregator;
             // needs destination d to be source row d (num_dst <= num_src)
};

}  // namespace tessera::nn
