// A random sampled block for the GNN layers' tests (fused_sage_conv_test.cc,
// sage_step_test.cc), with the awkward cases a sampler produces.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "csr_reference.h"

namespace tessera::testing {

// A block as a sampler builds one: num_dst destinations, each taking up to
// `fanout` of its in-neighbours in a random multigraph (all of them for -1),
// sources numbered destinations first. Every seventh destination has no
// in-edges; the last sources are reached by no edge.
struct SampledBlock {
  std::vector<int64_t> indptr{0}, indices;
  int64_t num_dst = 0, num_src = 0;

  SampledBlock(int64_t dsts, int64_t extra_srcs, int fanout, uint32_t seed) : num_dst(dsts) {
    num_src = dsts + extra_srcs;
    std::mt19937 rng(seed);
    for (int64_t d = 0; d < dsts; ++d) {
      const int in_degree = d % 7 == 0 ? 0 : static_cast<int>(rng() % 12);
      std::vector<int64_t> neighbours;
      // Two thirds of the sources take the edges, so some stay isolated.
      for (int k = 0; k < in_degree; ++k) neighbours.push_back(static_cast<int64_t>(rng() % (num_src * 2 / 3 + 1)));
      if (in_degree >= 3) neighbours[1] = neighbours[0];  // a duplicate edge, as a multigraph has
      const int take = fanout < 0 ? in_degree : std::min(fanout, in_degree);
      std::shuffle(neighbours.begin(), neighbours.end(), rng);
      indices.insert(indices.end(), neighbours.begin(), neighbours.begin() + take);
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }

  torch::Tensor indptr_t() const { return torch::tensor(indptr, torch::kInt64); }
  torch::Tensor indices_t() const { return torch::tensor(indices, torch::kInt64); }

  torch::Tensor dense(nn::CsrReduce reduce) const {
    return dense_reduction(indptr, indices, num_src, reduce, torch::kFloat64);
  }
};

}  // namespace tessera::testing
