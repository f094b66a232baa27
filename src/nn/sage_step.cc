#include "tessera/nn/sage_step.h"

#include <torch/torch.h>

#include "tessera/base/error.h"
#include "nn/cross_entropy_kernels.h"
#include "nn/csr_kernels.h"
#include "nn/narrow_gemm.h"
#include "nn/narrow_sage_layer.h"
#include "nn/relu_dropout_kernels.h"
#include "nn/sage_layer_kernels.h"

namespace tessera::nn {

std::vector<std::string> sage_layer_kernels(const SageOptions& o, bool inputs_aggregated) {
  std::vector<std::string> paths;
  const bool narrow = detail::narrow_gemm_available();
  for (int64_t i = 0; i < o.num_layers; ++i) {
    const int64_t width = i + 1 == o.num_layers ? o.num_classes : o.hidden;
    if (narrow && i == 0 && inputs_aggregated && width <= detail::kOnePassMax) paths.push_back("one-pass forward");
    else if (narrow && width <= detail::kNarrowMax) paths.push_back("narrow GEMM");
    else paths.push_back("BLAS");
  }
  return paths;
}

namespace {

constexpr const char* kOp = "SageStep";

void check_floats(const char* what, const torch::Tensor& t, int64_t rows, int64_t cols) {
  if (!t.defined() || t.dim() != 2 || t.size(0) != rows || t.size(1) != cols)
    fail("{}: {} has shape {}, expected [{}, {}]", kOp, what, t.defined() ? c10::str(t.sizes()) : "(undefined)", rows,
         cols);
  if (t.scalar_type() != torch::kFloat32 || !t.device().is_cpu() || !t.is_contiguous())
    fail("{}: {} must be contiguous float32 on the CPU", kOp, what);
}

const float* data_of(const torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; }

// The parameter's gradient buffer, reused when it has the parameter's shape.
float* gradient_of(torch::Tensor& p) {
  if (p.scalar_type() != torch::kFloat32 || !p.device().is_cpu() || !p.is_contiguous())
    fail("{}: parameters must be contiguous float32 on the CPU (one of shape {} is not)", kOp, c10::str(p.sizes()));
  torch::Tensor& g = p.mutable_grad();
  if (!g.defined() || g.sizes() != p.sizes() || !g.is_contiguous() || g.scalar_type() != torch::kFloat32)
    g = torch::empty_like(p, torch::MemoryFormat::Contiguous);
  return g.data_ptr<float>();
}

detail::SageWeights weights_of(SageConvImpl& l) {
  return {l.fc_self ? data_of(l.fc_self->weight) : nullptr, data_of(l.fc_neigh->weight), data_of(l.bias)};
}

detail::SageGradients weight_gradients_of(SageConvImpl& l) {
  detail::SageGradients g;
  if (l.fc_self) g.dw_self = gradient_of(l.fc_self->weight);
  g.dw_neigh = gradient_of(l.fc_neigh->weight);
  g.db = gradient_of(l.bias);
  return g;
}

// Layer i >= 1 on its block, its order as SageConvImpl::forward picks it in
// training (the input and the weights need gradients).
detail::SageBlock block_layer(SageConvImpl& l, const BlockTensors& b, size_t i) {
  detail::check_index_tensor(kOp, "indptr", b.indptr);
  detail::check_index_tensor(kOp, "indices", b.indices);
  if (b.indptr.size(0) != b.num_dst + 1 || b.num_dst > b.num_src || !b.indptr.is_contiguous() ||
      !b.indices.is_contiguous())
    fail("{}: layer {}'s block has {} indptr entries for {} destinations and {} sources", kOp, i, b.indptr.size(0),
         b.num_dst, b.num_src);
  detail::check_block(kOp, b.num_src, b.indptr, b.indices, l.reduce());
  detail::SageBlock s;
  s.indptr = b.indptr.data_ptr<int64_t>();
  s.indices = b.indices.data_ptr<int64_t>();
  s.num_src = b.num_src, s.num_dst = b.num_dst, s.in = l.in_feats(), s.out = l.out_feats();
  s.reduce = l.reduce();
  s.linear_first = linear_first_is_cheaper(s.num_src, s.num_dst, b.indices.numel(), s.in, s.out, true, true);
  return s;
}

// A buffer of at least n floats, kept and grown from step to step.
float* buffer(std::vector<float>& b, int64_t n) {
  if (static_cast<int64_t>(b.size()) < n) b.resize(static_cast<size_t>(n));
  return b.data();
}

}  // namespace

SageStepResult SageStep::run(Sage& model, const std::vector<BlockTensors>& blocks, const torch::Tensor& x_dst,
                             const torch::Tensor& aggregated, const torch::Tensor& labels) {
  SageImpl& m = *model;
  const size_t layers = m.num_layers();
  if (blocks.size() != layers) fail("{}: {} blocks for a {}-layer model", kOp, blocks.size(), layers);
  SageConvImpl& first = *m.layer(0);
  const int64_t n0 = blocks[0].num_dst;
  check_floats("aggregated", aggregated, n0, first.in_feats());
  if (first.fc_self) check_floats("x_dst", x_dst, n0, first.in_feats());
  std::vector<detail::SageBlock> shapes(layers);
  for (size_t i = 1; i < layers; ++i) {
    if (blocks[i].num_src != blocks[i - 1].num_dst)
      fail("{}: layer {}'s block has {} sources but layer {} gives {} rows", kOp, i, blocks[i].num_src, i - 1,
           blocks[i - 1].num_dst);
    shapes[i] = block_layer(*m.layer(i), blocks[i], i);
  }
  const int64_t rows = blocks.back().num_dst, classes = m.layer(layers - 1)->out_feats();
  if (labels.dim() != 1 || labels.size(0) != rows || labels.scalar_type() != torch::kInt64 ||
      !labels.device().is_cpu() || !labels.is_contiguous())
    fail("{}: labels must be contiguous int64 [{}] on the CPU, got {} {}", kOp, rows, c10::toString(labels.scalar_type()),
         c10::str(labels.sizes()));

  // Forward. ReLU + dropout after every layer but the last, drawn in layer
  // order from the default generator, as relu_dropout draws.
  const double p = m.options().dropout;
  const bool drops = m.is_training() && p > 0;
  std::vector<detail::DropoutDraw> draws(layers);
  auto draw = [&] { return drops ? detail::DropoutDraw::from_generator(p) : detail::DropoutDraw::relu_only(); };
  outputs_.resize(layers);
  forward_scratch_.resize(layers);
  input_grads_.resize(layers);
  if (layers > 1) draws[0] = draw();
  float* y0 = buffer(outputs_[0], n0 * first.out_feats());
  detail::sage_aggregated_forward(n0, first.in_feats(), first.out_feats(), data_of(x_dst), data_of(aggregated),
                                  weights_of(first), layers > 1 ? &draws[0] : nullptr, y0);
  for (size_t i = 1; i < layers; ++i) {
    const detail::SageBlock& s = shapes[i];
    float* y = buffer(outputs_[i], s.num_dst * s.out);
    detail::sage_block_forward(s, weights_of(*m.layer(i)), outputs_[i - 1].data(),
                               buffer(forward_scratch_[i], s.forward_scratch()), y);
    if (i + 1 < layers) {
      draws[i] = draw();
      if (s.num_dst * s.out > 0) detail::relu_dropout_forward(y, s.num_dst * s.out, draws[i], y);
    }
  }

  float* g = buffer(logits_grad_, rows * classes);
  const detail::CrossEntropyResult loss =
      detail::softmax_cross_entropy(outputs_[layers - 1].data(), labels.data_ptr<int64_t>(), rows, classes, g);

  // Backward, last layer first; g is the gradient of the current layer's output.
  for (size_t i = layers - 1; i >= 1; --i) {
    const detail::SageBlock& s = shapes[i];
    if (i + 1 < layers && s.num_dst * s.out > 0)  // back through its relu and dropout, in place
      detail::relu_dropout_backward(g, outputs_[i].data(), s.num_dst * s.out, draws[i].scale, g);
    detail::SageGradients to = weight_gradients_of(*m.layer(i));
    to.dx = buffer(input_grads_[i], s.num_src * s.in);
    detail::sage_block_backward(s, weights_of(*m.layer(i)), outputs_[i - 1].data(), forward_scratch_[i].data(), g,
                                buffer(backward_scratch_, s.backward_scratch()), to);
    g = to.dx;
  }
  detail::sage_aggregated_backward(n0, first.in_feats(), first.out_feats(), data_of(x_dst), data_of(aggregated),
                                   weights_of(first), g, layers > 1 ? y0 : nullptr, draws[0].scale,
                                   buffer(backward_scratch_, n0 * first.out_feats()), weight_gradients_of(first));
  // The loss as cross_entropy's float tensor holds it.
  return {static_cast<double>(static_cast<float>(loss.loss)), loss.correct};
}

}  // namespace tessera::nn
