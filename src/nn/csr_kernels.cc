#include "nn/csr_kernels.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "tessera/base/error.h"
#include "base/prefetch.h"
#include "nn/row_scale.h"

namespace tessera::nn::detail {
namespace {

// Below this many float adds a kernel runs on one thread: starting the team
// costs more than the work.
constexpr int64_t kParallelWork = 1 << 15;

inline void add_scaled_row(float* __restrict out, const float* __restrict in, float scale, int64_t f) {
#pragma omp simd
  for (int64_t j = 0; j < f; ++j) out[j] += scale * in[j];
}

}  // namespace

void check_index_tensor(const char* op, const char* what, const torch::Tensor& t) {
  if (!t.defined()) fail("{}: {} is undefined", op, what);
  if (t.dim() != 1) fail("{}: {} must be 1-D, got {}-D", op, what, t.dim());
  if (t.scalar_type() != torch::kInt64) fail("{}: {} must be int64, got {}", op, what, c10::toString(t.scalar_type()));
  if (!t.device().is_cpu()) fail("{}: {} must be on the CPU", op, what);
}

void check_block(const char* op, int64_t num_src, const torch::Tensor& indptr, const torch::Tensor& indices,
                 CsrReduce reduce) {
  const int64_t num_dst = indptr.size(0) - 1;
  const int64_t nnz = indices.size(0);
  if (num_dst < 0) fail("{}: indptr is empty (it needs num_dst + 1 entries)", op);
  const int64_t* ptr = indptr.data_ptr<int64_t>();
  if (ptr[0] != 0) fail("{}: indptr starts at {}, not 0", op, ptr[0]);
  if (ptr[num_dst] != nnz) fail("{}: indices has {} entries but indptr ends at {}", op, nnz, ptr[num_dst]);
  for (int64_t d = 0; d < num_dst; ++d) {
    if (ptr[d + 1] < ptr[d]) fail("{}: indptr decreases at destination {} ({} then {})", op, d, ptr[d], ptr[d + 1]);
  }
  if (reduce == CsrReduce::kGcnMean && num_dst > num_src)
    fail("{}: {} destinations but x has only {} rows (destination d must be source row d)", op, num_dst, num_src);

  // One parallel pass; the slow search for the first bad entry only on error.
  const int64_t* idx = indices.data_ptr<int64_t>();
  int64_t lo = 0, hi = -1;
  if (nnz > 0) {
    lo = idx[0];
    hi = idx[0];
#pragma omp parallel for reduction(min : lo) reduction(max : hi) if (nnz >= kParallelWork)
    for (int64_t e = 0; e < nnz; ++e) {
      lo = std::min(lo, idx[e]);
      hi = std::max(hi, idx[e]);
    }
  }
  if (lo < 0 || hi >= num_src) {
    for (int64_t e = 0; e < nnz; ++e) {
      if (idx[e] < 0 || idx[e] >= num_src)
        fail("{}: indices[{}] = {} is out of range for x with {} rows", op, e, idx[e], num_src);
    }
  }
}

// Each output row is written by one thread, so destinations are simply
// split among threads; dynamic chunks because sampled blocks have very
// uneven degrees.
void gather_rows(const float* x, const int64_t* ptr, const int64_t* idx, int64_t num_dst, int64_t f,
                 CsrReduce reduce, float* out) {
  auto row_at = [x, f](int64_t s) { return x + s * f; };
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

// A scatter: grad_x[indices[e]] += grad_out[d] * scale(d), and many edges
// hit the same source row. Each thread owns a contiguous range of source rows
// and walks all edges, applying only those that land in its range. Every
// thread reads the whole index array, but that is a sequential int64 stream,
// cheap next to the f-wide row adds; in exchange there are no atomics, no
// per-thread copies of grad_x (threads x num_src x f floats, larger than x
// itself), and no transposed CSR to build serially first. Each row also sums
// its terms in edge order whatever the thread count, so gradients are
// bitwise reproducible.
void scatter_rows(const float* g, const int64_t* ptr, const int64_t* idx, int64_t num_dst, int64_t num_src,
                  int64_t f, CsrReduce reduce, float* gx) {
  const int64_t work = (ptr[num_dst] + num_dst) * f;
#pragma omp parallel if (work >= kParallelWork)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t lo = num_src * t / nt, hi = num_src * (t + 1) / nt;
    // Zeroed by its owner, so the rows are first touched where they are used.
    std::memset(gx + lo * f, 0, (hi - lo) * f * sizeof(float));
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t begin = ptr[d], end = ptr[d + 1];
      const float scale = row_scale(reduce, end - begin);
      const float* gd = g + d * f;
      if (reduce == CsrReduce::kGcnMean && d >= lo && d < hi) add_scaled_row(gx + d * f, gd, scale, f);
      for (int64_t e = begin; e < end; ++e) {
        const int64_t s = idx[e];
        if (s >= lo && s < hi) add_scaled_row(gx + s * f, gd, scale, f);
      }
    }
  }
}

}  // namespace tessera::nn::detail
