// The AVX-512 narrow kernels' schedule, in one place for both files that run it (narrow_gemm.cc, and
// narrow_sage_layer.cc, whose one-pass layer must give the bits of the GEMMs it replaces): the narrow operand
// packed as whole registers, masks for a row's tail, rows per block, when a call splits over threads, and how
// far ahead they prefetch the long operand. Only in the kernels' x86-64-v4 build (cmake/kernels.cmake).
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera::nn::detail {

constexpr int kLanes = 16;

// How far ahead the kernels prefetch the long operand, in row blocks (a
// cache line of the block that far ahead per iteration): with inputs cold,
// 4 blocks (13-19 KB at 100 features) ran layer 0's GEMMs 8-15% faster than
// 1 block here.
constexpr int64_t kPrefetchBlocks = 4;

// Below this many multiply-adds a call runs on the calling thread alone.
constexpr int64_t kParallelMacs = int64_t{1} << 22;

// Rows per block of the kernels that multiply rows by the packed narrow
// operand (x W^T and g W; the one-pass layer's forward), for a narrow side
// of NB registers: as many accumulators as keep both FMA pipes busy through
// the FMA's latency, with registers left for the packed row.
template <int NB>
constexpr int kRowsTimesPacked = NB == 1 ? 12 : NB == 2 ? 6 : 4;

// Rows per block of the kernels that add rows' outer products (a weight's
// gradient g^T x; the one-pass layer's weight gradients).
template <int NB>
constexpr int kRowsOuterProducts = NB == 3 ? 4 : 8;

// Whether a times-packed call of m rows, n x k, splits its row blocks over
// threads: each row's sums stay on one thread, so the bits do not change.
inline bool times_packed_in_parallel(int64_t m, int64_t n, int64_t k) { return m * n * k >= kParallelMacs; }

// The threads an outer-product call of m x n over k rows splits its rows
// over. Each thread sums its share and the shares are added in thread
// order, so a call that runs on one thread gives other bits than a split
// one: the one-pass layer, which runs on one, matches the GEMMs only where
// this is 1.
inline int outer_product_threads(int64_t m, int64_t n, int64_t k) {
  return m * n * k >= kParallelMacs ? std::max(1, omp_get_max_threads()) : 1;
}

inline __mmask16 lane_mask(int64_t width) {
  return width >= kLanes ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << width) - 1);
}

// The narrow operand as k rows of NB registers, zero past its n columns, so
// that the kernels load whole registers without masks.
template <int NB>
std::vector<float> pack_rows(int64_t n, int64_t k, const float* b, int64_t ldb, bool transposed) {
  std::vector<float> packed(static_cast<size_t>(k * NB * kLanes), 0.0f);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) packed[kk * NB * kLanes + j] = transposed ? b[j * ldb + kk] : b[kk * ldb + j];
  return packed;
}

}  // namespace tessera::nn::detail

#endif
