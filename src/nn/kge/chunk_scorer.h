// The negative scores of a batch's chunks and their gradients, by hand: C
// chunks of K queries (one per positive) each against the same N negative
// rows. Dot scores are one batched GEMM forward and two backward; L2
// distances are the same GEMMs plus norms (|q|^2 + |n|^2 - 2 q.n); L1
// distances stream through distance_kernels. Buffers are kept between
// steps, so a step allocates nothing here once warm.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "fused_models.h"

namespace tessera::kge {

struct ChunkShape {
  int64_t chunks, k, n, d;  // queries are [chunks * k, d], negatives [chunks * n, d]
};

class ChunkScorer {
 public:
  ChunkScorer(NegativeKind kind, double gamma) : kind_(kind), gamma_(static_cast<float>(gamma)) {}

  // scores [chunks * k, n]: the score of query (c, k) against negative (c, n).
  void forward(const float* queries, const float* negatives, const ChunkShape& shape, float* scores);
  // Given grad = d loss / d scores, overwrites dq and dn (shaped as queries
  // and negatives) with d loss / d queries and / d negatives. Call after the
  // forward of the same rows.
  void backward(const float* queries, const float* negatives, const float* grad, const ChunkShape& shape, float* dq,
                float* dn);

 private:
  NegativeKind kind_;
  float gamma_;
  std::vector<float> distance_, query_norm_, negative_norm_, scaled_grad_;  // L2 / L1 workspace
};

}  // namespace tessera::kge
