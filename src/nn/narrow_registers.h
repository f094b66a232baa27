// What the AVX-512 narrow kernels share (narrow_gemm.cc, narrow_sage_layer.cc): the narrow operand packed as whole
// registers, masks for a row's tail, and how far ahead they prefetch the long operand. Only in builds with
// AVX-512 (tessera_kernels is compiled for the host).
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>

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
