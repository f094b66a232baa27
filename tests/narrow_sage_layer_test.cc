// The one-pass kernels of GraphSAGE's aggregated layer (nn/narrow_sage_layer.h)
// against the separate passes they replace, bit for bit: the forward against
// gemm() twice (the second accumulating), a bias pass and relu_dropout's
// pass; the weights' backward against the unmasking pass, the bias's column
// sums and gemm() for each weight. Row counts leave tails after the row
// blocks; widths 1, 10 and 16; with and without fc_self, bias and dropout.
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "nn/gemm.h"
#include "test_util.h"
#include "nn/narrow_gemm.h"
#include "nn/narrow_sage_layer.h"
#include "nn/relu_dropout_kernels.h"

namespace tessera::nn::detail {
namespace {

using tessera::testing::normal_floats;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  // An empty vector's data() may be null, which memcmp must not get.
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

struct Layer {
  int64_t n, in, out;
  std::vector<float> x_dst, aggregated, w_self, w_neigh, bias;
  Layer(int64_t n_, int64_t in_, int64_t out_, std::mt19937& rng) : n(n_), in(in_), out(out_) {
    x_dst = normal_floats(n * in, rng), aggregated = normal_floats(n * in, rng);
    w_self = normal_floats(out * in, rng), w_neigh = normal_floats(out * in, rng), bias = normal_floats(out, rng);
  }
  SageWeights weights(bool self, bool with_bias) const {
    return {self ? w_self.data() : nullptr, w_neigh.data(), with_bias ? bias.data() : nullptr};
  }
};

// The forward as separate passes.
std::vector<float> forward_in_passes(const Layer& l, const SageWeights& w, const DropoutDraw* then) {
  std::vector<float> y(l.n * l.out);
  gemm(false, true, l.n, l.out, l.in, 1.0f, l.aggregated.data(), l.in, w.w_neigh, l.in, 0.0f, y.data(), l.out);
  if (w.w_self != nullptr)
    gemm(false, true, l.n, l.out, l.in, 1.0f, l.x_dst.data(), l.in, w.w_self, l.in, 1.0f, y.data(), l.out);
  if (w.bias != nullptr)
    for (int64_t i = 0; i < l.n; ++i)
      for (int64_t j = 0; j < l.out; ++j) y[i * l.out + j] += w.bias[j];
  if (then != nullptr) relu_dropout_forward(y.data(), l.n * l.out, *then, y.data());
  return y;
}

struct WeightGradients {
  std::vector<float> dw_self, dw_neigh, db;
};

// The weights' backward as separate passes.
WeightGradients backward_in_passes(const Layer& l, bool self, const std::vector<float>& g, const float* activated,
                                   float scale) {
  std::vector<float> gy = g;
  if (activated != nullptr)
    for (size_t e = 0; e < gy.size(); ++e) gy[e] = activated[e] > 0.0f ? g[e] * scale : 0.0f;
  WeightGradients w{std::vector<float>(self ? l.out * l.in : 0), std::vector<float>(l.out * l.in),
                    std::vector<float>(l.out, 0.0f)};
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t j = 0; j < l.out; ++j) w.db[j] += gy[i * l.out + j];
  gemm(true, false, l.out, l.in, l.n, 1.0f, gy.data(), l.out, l.aggregated.data(), l.in, 0.0f, w.dw_neigh.data(),
       l.in);
  if (self) gemm(true, false, l.out, l.in, l.n, 1.0f, gy.data(), l.out, l.x_dst.data(), l.in, 0.0f, w.dw_self.data(), l.in);
  return w;
}

TEST(NarrowSageLayer, OnePassEqualsTheSeparatePassesBitForBit) {
  if (!narrow_gemm_available()) GTEST_SKIP() << "this build has no AVX-512 kernels (the separate passes run)";
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);  // the weight-gradient GEMM splits large calls over threads; these kernels then stand aside
  std::mt19937 rng(5);
  DropoutDraw dropout_draw;
  dropout_draw.seed = 0x1234567, dropout_draw.keep_below = 32768, dropout_draw.scale = 2.0f;
  const DropoutDraw relu_draw = DropoutDraw::relu_only();
  const DropoutDraw *dropout = &dropout_draw, *relu = &relu_draw;
  int dropped = 0;
  for (const int64_t n : {1, 7, 13, 301, 3001})
    for (const int64_t out : {1, 10, 16})
      for (const int64_t in : {3, 100}) {
        const Layer l(n, in, out, rng);
        const std::vector<float> g = normal_floats(n * out, rng);
        for (const bool self : {true, false})
          for (const bool with_bias : {true, false})
            for (const DropoutDraw* then : {dropout, relu, static_cast<const DropoutDraw*>(nullptr)}) {
              SCOPED_TRACE(fmt::format("n {} in {} out {} self {} bias {} {}", n, in, out, self, with_bias,
                                       then == nullptr ? "no activation" : then == relu ? "relu" : "dropout"));
              const SageWeights w = l.weights(self, with_bias);
              const std::vector<float> want = forward_in_passes(l, w, then);
              std::vector<float> got(n * out, -1.0f);
              ASSERT_TRUE(narrow_sage_forward(n, in, out, l.x_dst.data(), l.aggregated.data(), w, then, got.data()));
              EXPECT_TRUE(same_bits(got, want));
              for (float v : got) dropped += then == dropout && v == 0.0f;

              const float scale = then == nullptr ? 1.0f : then->scale;
              const float* activated = then == nullptr ? nullptr : want.data();
              const WeightGradients passes = backward_in_passes(l, self, g, activated, scale);
              WeightGradients one{std::vector<float>(passes.dw_self.size()), std::vector<float>(out * in),
                                  std::vector<float>(out)};
              SageGradients to;
              to.dw_self = self ? one.dw_self.data() : nullptr;
              to.dw_neigh = one.dw_neigh.data();
              to.db = one.db.data();
              ASSERT_TRUE(narrow_sage_weight_gradients(n, in, out, l.x_dst.data(), l.aggregated.data(), g.data(),
                                                       activated, scale, to));
              EXPECT_TRUE(same_bits(one.dw_neigh, passes.dw_neigh));
              EXPECT_TRUE(same_bits(one.dw_self, passes.dw_self));
              EXPECT_TRUE(same_bits(one.db, passes.db));
            }
      }
  EXPECT_GT(dropped, 1000) << "dropout dropped nothing";
  // Shapes that are not theirs are left alone.
  const Layer wide(4, 3, 17, rng);
  std::vector<float> y(4 * 17, 7.0f);
  EXPECT_FALSE(narrow_sage_forward(4, 3, 17, wide.x_dst.data(), wide.aggregated.data(), wide.weights(true, true),
                                   nullptr, y.data()));
  EXPECT_EQ(y[0], 7.0f);
  omp_set_num_threads(saved_threads);
}

}  // namespace
}  // namespace tessera::nn::detail
