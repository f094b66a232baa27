// nn::SageStep (tessera/nn/sage_step.h), the hand-written GraphSAGE training
// step, against the same step through autograd (forward_aggregated,
// cross_entropy, backward): the same loss, accuracy count and gradients, bit
// for bit, for 1-3 layers, both aggregators, dropout drawn or not, on chains
// of sampled blocks with empty rows, isolated sources and duplicate edges,
// and with its buffers reused across batches of other sizes.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tessera/nn/cross_entropy.h"
#include "tessera/nn/sage.h"
#include "tessera/nn/sage_step.h"
#include "tessera/version.h"
#include "sampled_block.h"
#include "test_util.h"

namespace tessera::nn {
namespace {

using tessera::testing::expect_error;
using tessera::testing::SampledBlock;

// A batch: blocks from the input layer to the seeds (each block's sources
// the previous block's destinations), layer 0's rows aggregated (random:
// the step takes them as given) and labels with some ignored.
struct Batch {
  std::vector<SampledBlock> sampled;
  std::vector<BlockTensors> blocks;
  torch::Tensor x_dst, aggregated, labels;

  Batch(int layers, int64_t seeds, int64_t in, int64_t classes, uint32_t seed) {
    std::vector<int64_t> dst(layers);  // destinations per layer, the seeds last
    dst[layers - 1] = seeds;
    for (int i = layers - 2; i >= 0; --i) dst[i] = dst[i + 1] + 3 * dst[i + 1] / 2 + 5;
    for (int i = 0; i < layers; ++i) {
      const int64_t sources = i == 0 ? 3 * dst[0] : dst[i - 1];
      sampled.emplace_back(dst[i], sources - dst[i], i == 1 ? -1 : 4, seed + i);
    }
    for (const SampledBlock& b : sampled) blocks.push_back(block_view(b.indptr, b.indices, b.num_src));
    torch::manual_seed(seed);
    x_dst = torch::randn({sampled[0].num_dst, in});
    aggregated = torch::randn({sampled[0].num_dst, in});
    labels = torch::randint(classes, {seeds}, torch::kInt64);
    labels.index_put_({torch::arange(0, seeds, 5)}, -100);
  }
};

struct Outcome {
  double loss = 0;
  int64_t correct = 0;
  std::vector<torch::Tensor> grads;
};

std::vector<torch::Tensor> gradients(Sage& model) {
  std::vector<torch::Tensor> g;
  for (const torch::Tensor& p : model->parameters()) g.push_back(p.grad().clone());
  return g;
}

Outcome through_autograd(Sage& model, const Batch& b, uint64_t seed) {
  model->zero_grad();
  torch::manual_seed(seed);  // the dropout's draws
  Outcome o;
  const torch::Tensor loss =
      cross_entropy(model->forward_aggregated(b.blocks, b.x_dst, b.aggregated), b.labels, &o.correct);
  loss.backward();
  o.loss = loss.item<double>();
  o.grads = gradients(model);
  return o;
}

Outcome by_hand(SageStep& step, Sage& model, const Batch& b, uint64_t seed) {
  torch::manual_seed(seed);
  Outcome o;
  const SageStepResult r = step.run(model, b.blocks, b.x_dst, b.aggregated, b.labels);
  o.loss = r.loss, o.correct = r.correct;
  o.grads = gradients(model);
  return o;
}

void expect_same(const Outcome& got, const Outcome& want) {
  EXPECT_EQ(got.loss, want.loss);
  EXPECT_EQ(got.correct, want.correct);
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) {
    EXPECT_TRUE(torch::equal(got.grads[i], want.grads[i]))
        << "parameter " << i << ": max difference " << (got.grads[i] - want.grads[i]).abs().max().item<double>();
    EXPECT_GT(want.grads[i].abs().sum().item<double>(), 0) << "parameter " << i << " got no gradient";
  }
}

TEST(SageStep, EqualsTheAutogradStepBitForBit) {
  // Hidden 16 takes the one-pass layer-0 kernels where the build has them, 24 the separate passes.
  for (const int64_t hidden : {16, 24})
    for (const int layers : {1, 2, 3})
      for (const std::string aggregator : {"mean", "gcn"})
        for (const double dropout : {0.5, 0.0})
          for (const bool training : {true, false}) {
            SCOPED_TRACE(fmt::format("hidden {}, {} layers, {}, dropout {}, training {}", hidden, layers, aggregator,
                                     dropout, training));
            SageOptions o;
            o.in_feats = 24, o.hidden = hidden, o.num_classes = 7, o.num_layers = layers, o.dropout = dropout;
            o.aggregator = aggregator;
            torch::manual_seed(1);
            Sage model(o);
            training ? model->train() : model->eval();
            SageStep step;
            // Larger, smaller, then larger again: buffers grow and are reused.
            uint32_t seed = 10;
            for (const int64_t seeds : {90, 31, 140}) {
              const Batch b(layers, seeds, o.in_feats, o.num_classes, ++seed);
              const Outcome want = through_autograd(model, b, seed);
              expect_same(by_hand(step, model, b, seed), want);
            }
          }
}

// Each layer's kernels by its width, against the limits the kernels state:
// one-pass forward for an aggregated layer 0 up to 16 wide, narrow GEMMs up
// to 48, the BLAS beyond, or everywhere without the x86-64-v4 kernels.
TEST(SageStep, LayerKernelsFollowTheWidthLimits) {
  const bool narrow = std::string(tessera::kernel_level()) == "x86-64-v4";
  const std::string one_pass = narrow ? "one-pass forward" : "BLAS", gemm = narrow ? "narrow GEMM" : "BLAS";
  struct Case {
    int64_t hidden, classes;
    int layers;
    bool aggregated;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {16, 47, 2, true, {one_pass, gemm}},  {16, 47, 2, false, {gemm, gemm}}, {17, 47, 2, true, {gemm, gemm}},
      {48, 49, 2, true, {gemm, "BLAS"}},   {49, 7, 3, true, {"BLAS", "BLAS", gemm}}, {64, 16, 1, true, {one_pass}},
      {256, 47, 2, true, {"BLAS", gemm}},
  };
  for (const Case& c : cases) {
    tessera::nn::SageOptions o;
    o.in_feats = 100;
    o.hidden = c.hidden;
    o.num_classes = c.classes;
    o.num_layers = c.layers;
    EXPECT_EQ(tessera::nn::sage_layer_kernels(o, c.aggregated), c.expected)
        << "hidden " << c.hidden << ", classes " << c.classes << ", " << c.layers << " layers";
  }
}

TEST(SageStep, BadInputNamesTheProblem) {
  SageOptions o;
  o.in_feats = 6, o.hidden = 4, o.num_classes = 3;
  Sage model(o);
  SageStep step;
  const Batch b(2, 10, o.in_feats, o.num_classes, 3);
  expect_error([&] { step.run(model, {b.blocks[0]}, b.x_dst, b.aggregated, b.labels); },
               "SageStep: 1 blocks for a 2-layer model");
  expect_error([&] { step.run(model, b.blocks, b.x_dst, b.aggregated.narrow(1, 0, 5).contiguous(), b.labels); },
               "SageStep: aggregated has shape [" + std::to_string(b.sampled[0].num_dst) + ", 5], expected [" +
                   std::to_string(b.sampled[0].num_dst) + ", 6]");
  expect_error([&] { step.run(model, b.blocks, b.x_dst, b.aggregated, b.labels.narrow(0, 0, 9)); },
               "SageStep: labels must be contiguous int64 [10] on the CPU");
  torch::Tensor bad = b.labels.clone();
  bad[1] = 3;
  expect_error([&] { step.run(model, b.blocks, b.x_dst, b.aggregated, bad); }, "row 1 has label 3, outside [0, 3)");
  std::vector<int64_t> indices = b.sampled[1].indices;
  indices.at(0) = b.sampled[1].num_src;  // a source past the block's
  std::vector<BlockTensors> broken = b.blocks;
  broken[1] = block_view(b.sampled[1].indptr, indices, b.sampled[1].num_src);
  expect_error([&] { step.run(model, broken, b.x_dst, b.aggregated, b.labels); }, "SageStep");
}

}  // namespace
}  // namespace tessera::nn
