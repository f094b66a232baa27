// The layers' GEMM (nn/gemm.h) against a double-precision reference, at the
// shapes where it takes its narrow kernels (nn/narrow_gemm.h: a side of at
// most 48 columns, each width from 1 to 48, so every register and mask tail)
// and around them: row counts that leave a tail after the kernels' row
// blocks, leading dimensions wider than the rows, alpha and beta, empty
// sides, and the OpenMP team split both ways.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "nn/gemm.h"
#include "test_util.h"
#include "nn/narrow_gemm.h"

namespace tessera::nn::detail {
namespace {

struct Case {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra columns in every leading dimension
};

using tessera::testing::normal_floats;

// Runs gemm() on one case and compares every element of C (and that the
// padding between rows is untouched) with the sums in double.
void check(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  const std::vector<float> a = normal_floats(static_cast<size_t>(a_rows * lda), rng);
  const std::vector<float> b = normal_floats(static_cast<size_t>(b_rows * ldb), rng);
  std::vector<float> out = normal_floats(static_cast<size_t>(std::max<int64_t>(c.m, 1) * ldc), rng);
  const std::vector<float> before = out;
  gemm(c.trans_a, c.trans_b, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, out.data(), ldc);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = c.trans_a ? a[p * lda + i] : a[i * lda + p];
        const double y = c.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum += x * y, magnitude += std::abs(x * y);
      }
      const double old = before[i * ldc + j];
      const double want = c.alpha * sum + (c.beta == 0.0f ? 0.0 : c.beta * old);
      // Float sums of k products: a few units of rounding of their magnitude.
      const double tolerance = 1e-6 * (std::abs(c.alpha) * magnitude + std::abs(c.beta * old)) + 1e-6;
      ASSERT_NEAR(out[i * ldc + j], want, tolerance)
          << "C[" << i << "][" << j << "] for trans_a " << c.trans_a << " trans_b " << c.trans_b << ", m " << c.m
          << " n " << c.n << " k " << c.k << ", alpha " << c.alpha << " beta " << c.beta << ", pad " << c.pad;
    }
    for (int64_t j = c.n; j < ldc; ++j) ASSERT_EQ(out[i * ldc + j], before[i * ldc + j]) << "padding written";
  }
}

TEST(NarrowGemm, EveryNarrowWidthMatchesDoubleSums) {
  // The forward (x W^T), an input's gradient (g W) and a weight's (g^T x),
  // each narrow side from 1 to 48 against 29 and 100 on the other, over
  // row counts with and without a tail after the row blocks.
  uint32_t seed = 1;
  for (int64_t narrow = 1; narrow <= kNarrowMax; ++narrow)
    for (int64_t rows : {1, 37, 100})
      for (int64_t wide : {29, 100}) {
        check({false, true, rows, narrow, wide, 1.0f, 0.0f, 0}, seed++);
        check({false, false, rows, narrow, wide, 1.0f, 0.0f, 0}, seed++);
        check({true, false, narrow, wide, rows, 1.0f, 0.0f, 0}, seed++);
      }
}

TEST(NarrowGemm, AlphaBetaAndWideLeadingDimensions) {
  uint32_t seed = 100;
  for (const auto& [alpha, beta] : {std::pair{1.0f, 1.0f}, {0.5f, -2.0f}, {-1.5f, 0.0f}})
    for (int64_t narrow : {5, 16, 17, 47})
      for (int64_t pad : {0, 3}) {
        check({false, true, 61, narrow, 100, alpha, beta, pad}, seed++);
        check({false, false, 61, narrow, 40, alpha, beta, pad}, seed++);
        check({true, false, narrow, 100, 61, alpha, beta, pad}, seed++);
      }
}

TEST(NarrowGemm, WideShapesAndEmptySidesStillMatch) {
  // Past the narrow widths gemm() takes the BLAS; empty sides are no-ops
  // (k = 0 leaves beta * C).
  uint32_t seed = 200;
  check({false, true, 50, 49, 30, 1.0f, 0.0f, 0}, seed++);
  check({true, false, 49, 30, 50, 1.0f, 0.0f, 0}, seed++);
  check({true, true, 20, 16, 30, 1.0f, 0.0f, 2}, seed++);
  check({false, true, 0, 16, 30, 1.0f, 0.0f, 0}, seed++);
  check({false, true, 10, 16, 0, 1.0f, 0.5f, 0}, seed++);
  check({true, false, 16, 30, 0, 1.0f, 0.0f, 0}, seed++);
}

TEST(NarrowGemm, LargeCallsSplitOverThreadsAndStayExact) {
  // Above the kernels' parallel threshold, with a team of 1 and of 3: the
  // weight's gradient sums each thread's rows apart and adds them after.
  const int saved = omp_get_max_threads();
  uint32_t seed = 300;
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    check({false, true, 5343, 16, 100, 1.0f, 0.0f, 0}, seed++);
    check({true, false, 16, 100, 5343, 1.0f, 0.0f, 0}, seed++);
    check({true, false, 40, 64, 3001, 1.0f, 1.0f, 1}, seed++);
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace tessera::nn::detail
