#include "sampling/input_aggregation.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/prefetch.h"
#include "nn/row_scale.h"

namespace tessera::sampling {
namespace {

inline void add_row(float* __restrict out, const float* __restrict in, int64_t f) {
#pragma omp simd
  for (int64_t j = 0; j < f; ++j) out[j] += in[j];
}

}  // namespace

void aggregate_located_rows(const char* const* rows, const Block& block, nn::CsrReduce reduce, int64_t f,
                            float* copied, int64_t copies, float* aggregated) {
  const int64_t num_dst = block.num_dst, num_src = block.num_src();
  const int64_t* ptr = block.indptr.data();
  const int64_t* idx = block.indices.data();
  const int64_t nnz = block.num_edges();
  // The block by source (a counting sort of its edges): which destinations
  // each source row is added into.
  std::vector<int64_t> start(static_cast<size_t>(num_src) + 1, 0), into(static_cast<size_t>(nnz));
  for (int64_t e = 0; e < nnz; ++e) ++start[idx[e] + 1];
  for (int64_t s = 0; s < num_src; ++s) start[s + 1] += start[s];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t d = 0; d < num_dst; ++d)
    for (int64_t e = ptr[d]; e < ptr[d + 1]; ++e) into[fill[idx[e]]++] = d;

  const bool gcn = reduce == nn::CsrReduce::kGcnMean;
  std::fill(aggregated, aggregated + num_dst * f, 0.0f);
  const size_t row_bytes = static_cast<size_t>(f) * sizeof(float);
  for (int64_t s = 0; s < num_src; ++s) {
    // The rows are random rows of a large partition: ask for the next ones'
    // cache lines while this one is added.
    if (s + kPrefetchRows < num_src) prefetch_row(rows[s + kPrefetchRows], row_bytes);
    const float* row = reinterpret_cast<const float*>(rows[s]);
    if (s < copies) std::memcpy(copied + s * f, row, row_bytes);
    if (gcn && s < num_dst) add_row(aggregated + s * f, row, f);
    for (int64_t k = start[s]; k < start[s + 1]; ++k) add_row(aggregated + into[k] * f, row, f);
  }
  for (int64_t d = 0; d < num_dst; ++d) {
    const float scale = nn::detail::row_scale(reduce, ptr[d + 1] - ptr[d]);
    if (scale == 1.0f) continue;
    float* o = aggregated + d * f;
#pragma omp simd
    for (int64_t j = 0; j < f; ++j) o[j] *= scale;
  }
}

}  // namespace tessera::sampling
