// The CSR gather under csr_aggregate(), fused_sage_conv() and the loader's
// input aggregation, as a template over where source row s lies: rows of
// one matrix (x + s * f), or rows wherever they were found (a pointer per
// source). Compiled where it is used, in the host-tuned kernel library.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "base/prefetch.h"
#include "tessera/nn/csr_reduce.h"

namespace tessera::nn::detail {

// Below this many float adds a kernel runs on one thread: starting the team
// costs more than the work.
constexpr int64_t kParallelWork = 1 << 15;

// 1/deg for mean (1 for an isolated destination), 1/(deg + 1) for gcn, 1 for sum.
inline float row_scale(CsrReduce reduce, int64_t deg) {
  switch (reduce) {
    case CsrReduce::kSum: return 1.0f;
    case CsrReduce::kMean: return deg > 0 ? 1.0f / static_cast<float>(deg) : 1.0f;
    case CsrReduce::kGcnMean: return 1.0f / static_cast<float>(deg + 1);
  }
  return 1.0f;
}

// out[d] = reduce over d's in-edges of row_at(indices[e]) (f floats each;
// kGcnMean adds row_at(d)); all num_dst rows of out are written. Each output
// row is written by one thread, so destinations are simply split among
// threads; dynamic chunks because sampled blocks have very uneven degrees.
template <typename RowAt>
void gather_rows_at(RowAt row_at, const int64_t* ptr, const int64_t* idx, int64_t num_dst, int64_t f,
                    CsrReduce reduce, float* out) {
  const int64_t nnz = ptr[num_dst];
  const int64_t work = (nnz + num_dst) * f;
#pragma omp parallel for schedule(dynamic, 256) if (work >= kParallelWork)
  for (int64_t d = 0; d < num_dst; ++d) {
    float* __restrict o = out + d * f;
    int64_t e = ptr[d];
    const int64_t end = ptr[d + 1];
    // Start from the first term rather than from zeros: one pass less.
    const float* first = reduce == CsrReduce::kGcnMean ? row_at(d) : e < end ? row_at(idx[e++]) : nullptr;
    if (first == nullptr) {
      std::fill(o, o + f, 0.0f);
      continue;
    }
#pragma omp simd
    for (int64_t j = 0; j < f; ++j) o[j] = first[j];
    // Source rows are random rows: ask for the cache lines of the rows a few
    // edges ahead (into the next destinations too) while adding this one,
    // so their misses overlap.
    for (; e < end; ++e) {
      if (e + kPrefetchRows < nnz) prefetch_row_kept(row_at(idx[e + kPrefetchRows]), f * sizeof(float));
      const float* __restrict in = row_at(idx[e]);
#pragma omp simd
      for (int64_t j = 0; j < f; ++j) o[j] += in[j];
    }
    const float scale = row_scale(reduce, end - ptr[d]);
    if (scale != 1.0f) {
#pragma omp simd
      for (int64_t j = 0; j < f; ++j) o[j] *= scale;
    }
  }
}

}  // namespace tessera::nn::detail
