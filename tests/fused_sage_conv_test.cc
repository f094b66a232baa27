// fused_sage_conv (tessera/nn/fused_sage_conv.h) against autograd over the
// unfused libtorch ops in double precision: a dense adjacency matmul, two
// linears and a bias, on blocks sampled from a small random graph with
// empty rows, isolated destinations, fan-out -1 (every in-edge) and
// duplicate edges, in both evaluation orders.
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tessera/base/error.h"
#include "tessera/nn/fused_sage_conv.h"
#include "tessera/nn/relu_dropout.h"
#include "csr_reference.h"
#include "sampled_block.h"
#include "test_util.h"

namespace tessera::nn {
namespace {

using tessera::testing::expect_error;

using tessera::testing::SampledBlock;

struct Case {
  CsrReduce reduce;
  bool linear_first, bias, x_grad;
};

std::string name(const Case& c) {
  return std::string(c.reduce == CsrReduce::kGcnMean ? "gcn" : c.reduce == CsrReduce::kMean ? "mean" : "sum") +
         (c.linear_first ? " linear-first" : " aggregate-first") + (c.bias ? " bias" : "") +
         (c.x_grad ? " x-grad" : "");
}

// Close to 1e-5 of the reference's scale (float against double).
void expect_close(const torch::Tensor& got, const torch::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  if (want.numel() == 0) return;
  const double scale = std::max(1.0, want.abs().max().item<double>());
  const double err = (got.to(torch::kFloat64) - want).abs().max().item<double>();
  EXPECT_LE(err, 1e-5 * scale) << what << ": max error " << err << " at scale " << scale;
}

void check(const SampledBlock& b, int64_t in, int64_t out, const Case& c) {
  SCOPED_TRACE(name(c) + " on " + std::to_string(b.num_dst) + " destinations, " + std::to_string(b.num_src) +
               " sources, " + std::to_string(b.indices.size()) + " edges, " + std::to_string(in) + " -> " +
               std::to_string(out));
  const bool gcn = c.reduce == CsrReduce::kGcnMean;
  const torch::Tensor x0 = torch::randn({b.num_src, in}), ws0 = torch::randn({out, in}),
                      wn0 = torch::randn({out, in}), bias0 = torch::randn({out}), g = torch::randn({b.num_dst, out});

  auto leaf = [](const torch::Tensor& t, bool grad) { return t.clone().requires_grad_(grad); };
  const torch::Tensor x = leaf(x0, c.x_grad), ws = leaf(ws0, true), wn = leaf(wn0, true), bias = leaf(bias0, true);
  const torch::Tensor y = fused_sage_conv(x, b.indptr_t(), b.indices_t(), b.num_dst, gcn ? torch::Tensor() : ws, wn,
                                          c.bias ? bias : torch::Tensor(), c.reduce, c.linear_first);
  y.backward(g);

  const auto d = torch::kFloat64;
  const torch::Tensor rx = leaf(x0.to(d), c.x_grad), rws = leaf(ws0.to(d), true), rwn = leaf(wn0.to(d), true),
                      rbias = leaf(bias0.to(d), true);
  torch::Tensor ref = torch::nn::functional::linear(b.dense(c.reduce).mm(rx), rwn);
  if (!gcn) ref = ref + torch::nn::functional::linear(rx.narrow(0, 0, b.num_dst), rws);
  if (c.bias) ref = ref + rbias;
  ref.backward(g.to(d));

  expect_close(y.detach(), ref.detach(), "output");
  expect_close(wn.grad(), rwn.grad(), "w_neigh's gradient");
  if (!gcn) {
    expect_close(ws.grad(), rws.grad(), "w_self's gradient");
  }
  if (c.bias) {
    expect_close(bias.grad(), rbias.grad(), "bias's gradient");
  }
  if (c.x_grad) {
    expect_close(x.grad(), rx.grad(), "x's gradient");
  } else {
    EXPECT_FALSE(x.grad().defined());
  }
}

void check_all_cases(const SampledBlock& b, int64_t in, int64_t out) {
  for (CsrReduce reduce : {CsrReduce::kMean, CsrReduce::kGcnMean, CsrReduce::kSum})
    for (bool linear_first : {false, true})
      for (bool bias : {false, true})
        for (bool x_grad : {false, true}) check(b, in, out, {reduce, linear_first, bias, x_grad});
}

TEST(FusedSageConv, SampledBlocksMatchTheUnfusedOps) {
  torch::manual_seed(3);
  check_all_cases(SampledBlock(40, 90, 5, 1), 13, 6);  // odd widths: the vector loops' tails
  check_all_cases(SampledBlock(40, 90, -1, 2), 16, 47);  // fan-out -1: every in-edge
}

// Large enough for the kernels' parallel paths and OpenBLAS's blocking.
TEST(FusedSageConv, ABenchSizedBlockMatchesTheUnfusedOps) {
  torch::manual_seed(4);
  const SampledBlock b(1200, 4000, 10, 3);
  check(b, 100, 16, {CsrReduce::kMean, false, true, false});
  check(b, 100, 16, {CsrReduce::kMean, true, true, true});
  check(b, 16, 47, {CsrReduce::kGcnMean, false, true, true});
}

TEST(FusedSageConv, DegenerateBlocks) {
  torch::manual_seed(5);
  check_all_cases(SampledBlock(0, 5, 3, 4), 4, 3);  // no destinations
  check_all_cases(SampledBlock(6, 0, 3, 5), 4, 3);  // destinations only (a full-graph block)
  SampledBlock none(5, 5, 0, 6);  // fan-out 0: no edges at all
  check_all_cases(none, 4, 3);
}

TEST(FusedSageConv, BadInputNamesTheProblem) {
  const SampledBlock b(4, 6, 3, 7);
  const torch::Tensor x = torch::randn({10, 8}), w = torch::randn({3, 8}), bias = torch::randn({3});
  const torch::Tensor ptr = b.indptr_t(), idx = b.indices_t();
  auto call = [&](const torch::Tensor& xi, int64_t nd, const torch::Tensor& ws, const torch::Tensor& wn,
                  const torch::Tensor& bi) { fused_sage_conv(xi, ptr, idx, nd, ws, wn, bi, CsrReduce::kMean, false); };
  expect_error([&] { call(x.to(torch::kFloat64), 4, w, w, bias); }, "x_src must be float32, got Double");
  expect_error([&] { call(x, 11, w, w, bias); }, "11 destinations but 10 source rows");
  expect_error([&] { call(x, 3, w, w, bias); }, "indptr has 5 entries, expected 4 for 3 destinations");
  expect_error([&] { call(x, 4, w, torch::randn({3, 7}), bias); }, "w_neigh has shape [3, 7], expected [3, 8]");
  expect_error([&] { call(x, 4, torch::randn({2, 8}), w, bias); }, "w_self has shape [2, 8], expected [3, 8]");
  expect_error([&] { call(x, 4, w, w, torch::randn({4})); }, "bias has shape [4], expected [3]");
  expect_error([&] { call(x, 4, w, torch::randn({24}), bias); }, "w_neigh must be 2-D");
  expect_error([&] { call(x.narrow(0, 0, 5), 4, w, w, bias); }, "out of range for x with 5 rows");
}

}  // namespace
}  // namespace tessera::nn

namespace tessera::nn {
namespace {

// The layer on rows aggregated beforehand equals the layer on the block.
TEST(FusedSageConv, PreAggregatedRowsGiveTheSameLayer) {
  torch::manual_seed(6);
  const SampledBlock b(50, 120, 10, 8);
  for (CsrReduce reduce : {CsrReduce::kMean, CsrReduce::kGcnMean}) {
    SCOPED_TRACE(reduce == CsrReduce::kMean ? "mean" : "gcn");
    const bool gcn = reduce == CsrReduce::kGcnMean;
    const torch::Tensor x = torch::randn({b.num_src, 9}), bias0 = torch::randn({4});
    const torch::Tensor ws0 = torch::randn({4, 9}), wn0 = torch::randn({4, 9}), g = torch::randn({b.num_dst, 4});
    std::vector<torch::Tensor> outs, grads;
    for (bool aggregated : {false, true}) {
      const torch::Tensor ws = ws0.clone().requires_grad_(), wn = wn0.clone().requires_grad_(),
                          bias = bias0.clone().requires_grad_();
      const torch::Tensor y =
          aggregated ? fused_sage_conv_aggregated(x.narrow(0, 0, b.num_dst),
                                                  csr_aggregate(x, b.indptr_t(), b.indices_t(), reduce),
                                                  gcn ? torch::Tensor() : ws, wn, bias)
                     : fused_sage_conv(x, b.indptr_t(), b.indices_t(), b.num_dst, gcn ? torch::Tensor() : ws, wn,
                                       bias, reduce, false);
      y.backward(g);
      outs.push_back(y.detach());
      grads.push_back(wn.grad());
      grads.push_back(bias.grad());
      if (!gcn) grads.push_back(ws.grad());
    }
    EXPECT_TRUE(torch::allclose(outs[0], outs[1], 1e-5, 1e-5));
    const size_t per = grads.size() / 2;
    for (size_t i = 0; i < per; ++i) EXPECT_TRUE(torch::allclose(grads[i], grads[per + i], 1e-5, 1e-5)) << i;
  }
  // Inputs that need a gradient get it: d/d(aggregated) = g Wn, d/d(x_dst) = g Ws.
  const torch::Tensor agg = torch::randn({7, 5}).requires_grad_(), xd = torch::randn({7, 5}).requires_grad_();
  const torch::Tensor ws = torch::randn({3, 5}), wn = torch::randn({3, 5}), g = torch::randn({7, 3});
  fused_sage_conv_aggregated(xd, agg, ws, wn, torch::Tensor()).backward(g);
  EXPECT_TRUE(torch::allclose(agg.grad(), g.mm(wn), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(xd.grad(), g.mm(ws), 1e-5, 1e-5));
  expect_error([&] { fused_sage_conv_aggregated(torch::randn({6, 5}), agg, ws, wn, torch::Tensor()); },
               "x_dst has shape [6, 5] but aggregated [7, 5]");
}


// Layer 0 with relu and dropout in its own node gives the bits of the layer
// followed by relu_dropout (the same generator draw), forward and backward,
// in training (p 0.5, and p 0: relu alone, no draw) and in evaluation; with
// and without the self term, the bias, and inputs that need gradients.
TEST(FusedSageConv, ReluDropoutInTheLayerMatchesTheSeparateOp) {
  // Width 16 takes the one-pass kernels where the build has them (when the
  // inputs need no gradient, backward too), 20 the separate passes.
  for (const int64_t width : {16, 20})
    for (const bool input_grads : {true, false})
      for (const bool gcn : {false, true})
        for (const bool with_bias : {true, false})
          for (const ReluDropout then : {ReluDropout{0.5, true}, ReluDropout{0.0, true}, ReluDropout{0.5, false}}) {
            SCOPED_TRACE(fmt::format("width {} input gradients {} gcn {} bias {} p {} training {}", width, input_grads,
                                     gcn, with_bias, then.p, then.training));
            torch::manual_seed(9);
            const torch::Tensor agg0 = torch::randn({301, 9}), xd0 = torch::randn({301, 9});
            const torch::Tensor ws0 = torch::randn({width, 9}), wn0 = torch::randn({width, 9});
            const torch::Tensor b0 = torch::randn({width});
            const torch::Tensor g = torch::randn({301, width});
            std::vector<torch::Tensor> results;
            for (const bool fused : {false, true}) {
              const torch::Tensor agg = agg0.clone().requires_grad_(input_grads),
                                  xd = xd0.clone().requires_grad_(input_grads);
              const torch::Tensor ws = ws0.clone().requires_grad_(), wn = wn0.clone().requires_grad_(),
                                  b = b0.clone().requires_grad_();
              const torch::Tensor w_self = gcn ? torch::Tensor() : ws, bias = with_bias ? b : torch::Tensor();
              torch::manual_seed(3);  // the dropout's draw
              const torch::Tensor y =
                  fused ? fused_sage_conv_aggregated(xd, agg, w_self, wn, bias, then)
                        : relu_dropout(fused_sage_conv_aggregated(xd, agg, w_self, wn, bias), then.p, then.training);
              y.backward(g);
              results.push_back(y.detach());
              for (const torch::Tensor& t : {agg, xd, ws, wn, b})
                results.push_back(t.grad().defined() ? t.grad() : torch::zeros({0}));
            }
            const size_t per = results.size() / 2;
            EXPECT_GT(results[0].eq(0).sum().item<int64_t>(), 0) << "nothing was zeroed";
            for (size_t i = 0; i < per; ++i) EXPECT_TRUE(torch::equal(results[i], results[per + i])) << "result " << i;
          }
  expect_error([&] { fused_sage_conv_aggregated(torch::Tensor(), torch::randn({2, 3}), torch::Tensor(),
                                                torch::randn({4, 3}), torch::Tensor(), ReluDropout{1.0, true}); },
               "dropout p must be in [0, 1), got 1");
}

}  // namespace
}  // namespace tessera::nn
