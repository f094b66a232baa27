// The passes behind relu_dropout (tessera/nn/relu_dropout.h), for a layer that applies them inside its own
// forward and backward (fused_sage_conv_aggregated's `then`): the same draws from the same generator, so the
// fused and the separate forms give the same bits.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tessera::nn::detail {

// One call's dropout: its stream's seed, the keep threshold on 16-bit draws
// and the survivors' scale. relu_only() keeps everything at scale 1 and
// draws nothing from the generator (relu_dropout's eval and p == 0 path).
struct DropoutDraw {
  uint64_t seed = 0;
  uint32_t keep_below = 1u << 16;
  float scale = 1.0f;
  static DropoutDraw relu_only() { return {}; }
  // One draw from libtorch's default CPU generator, as relu_dropout makes.
  static DropoutDraw from_generator(double p);
  // The stream of a known seed (a backward drawing its forward's again).
  static DropoutDraw with_seed(uint64_t seed, double p);
};

// The 16-bit draws of elements [4q, 4q + 4), lowest bits first: SplitMix64's
// output function of the seed stepped q times, so that any element's draw
// is known without the others' (threads and fused kernels take their own).
constexpr uint64_t kDrawStep = 0x9e3779b97f4a7c15ULL, kDrawMix1 = 0xbf58476d1ce4e5b9ULL,
                   kDrawMix2 = 0x94d049bb133111ebULL;
inline uint64_t quad_draws(const DropoutDraw& d, uint64_t q) {
  uint64_t z = d.seed + q * kDrawStep;
  z = (z ^ (z >> 30)) * kDrawMix1;
  z = (z ^ (z >> 27)) * kDrawMix2;
  return z ^ (z >> 31);
}

#if defined(__AVX2__)
// Four lanes' 64-bit products: AVX-512's own instruction, or on AVX2, which
// has none, three 32 x 32 -> 64-bit products (the high halves' falls off).
inline __m256i mullo64(__m256i a, __m256i b) {
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
  return _mm256_mullo_epi64(a, b);
#else
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                         _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
  return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
#endif
}

// quad_draws of quads q, q + 1, q + 2, q + 3 in one register's four 64-bit
// lanes (the kernels' AVX2 and AVX-512 builds): the draws of elements
// [4q, 4q + 16), the same bits as quad_draws.
inline __m256i quad_draws_x4(const DropoutDraw& d, uint64_t q) {
  const __m256i quads = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<int64_t>(q)), _mm256_set_epi64x(3, 2, 1, 0));
  __m256i z = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<int64_t>(d.seed)),
                               mullo64(quads, _mm256_set1_epi64x(static_cast<int64_t>(kDrawStep))));
  z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), _mm256_set1_epi64x(static_cast<int64_t>(kDrawMix1)));
  z = mullo64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), _mm256_set1_epi64x(static_cast<int64_t>(kDrawMix2)));
  return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}
#endif

// out = x > 0 and kept ? x * scale : 0, over n elements; out may be x.
void relu_dropout_forward(const float* x, int64_t n, const DropoutDraw& draw, float* out);

// gx = out > 0 ? g * scale : 0 (out: the forward's result).
void relu_dropout_backward(const float* g, const float* out, int64_t n, float scale, float* gx);

// Dropout alone: out = x kept ? x * scale : 0; its backward the same of g,
// from the same draw (no mask is kept).
void dropout_forward(const float* x, int64_t n, const DropoutDraw& draw, float* out);
void dropout_backward(const float* g, int64_t n, const DropoutDraw& draw, float* gx);

}  // namespace tessera::nn::detail
