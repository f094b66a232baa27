// One GraphSAGE training step, forward, softmax cross-entropy and backward, written out by hand over a Sage
// model's layers: the kernels autograd runs through fused_sage_conv_aggregated, fused_sage_conv, relu_dropout and
// cross_entropy, in the same order on the same data (so the same bits: loss, accuracy count, every gradient), with
// none of autograd's graph: no nodes, no saved tensors, no allocation per op. Its buffers live from one step to
// the next, grown to the largest batch seen. At the bench's mini-batch shapes the graph's dispatch, allocations
// and bookkeeping were 15-25% of the step (design.md, "The GNN step").
//
// For a model whose layer 0 gets its aggregation done (a loader's aggregate_inputs), as the trainer runs it;
// evaluation, the Python modules and any other use keep autograd. One step at a time per object. Malformed input
// throws tessera::Error naming the layer, shape or label at fault, before any gradient is written.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/nn/sage.h"

namespace tessera::nn {

// The kernels each layer of a model of these options runs in this process, input layer first: "one-pass forward"
// (the first layer on aggregated inputs, at most 16 wide: its forward in one pass over the rows, and its weight
// gradients too where the narrow GEMM they replace would run on one thread, else that GEMM),
// "narrow GEMM" (at most 48 wide: GEMMs that read the long operand in place) or "BLAS" (wider, or a CPU without
// AVX-512: every GEMM through the BLAS, which packs its long operand on each call). Those two limits are the
// kernels' (x86-64-v4 build, design.md "Kernels and CPU levels"); `train sage` states the paths in its log and
// final record (layer_kernels).
std::vector<std::string> sage_layer_kernels(const SageOptions& options, bool inputs_aggregated);

struct SageStepResult {
  double loss = 0;      // as cross_entropy's (float) loss tensor holds it
  int64_t correct = 0;  // rows whose first maximal logit is at the label
};

class SageStep {
 public:
  // The forward in the model's mode (in training, dropout draws from libtorch's default generator exactly as
  // forward_aggregated does), the loss over labels (int64 [blocks.back().num_dst], -100 ignored) and the gradient
  // of every parameter written into its grad(): allocated on the first step, overwritten after, which is what
  // zero_grad() + backward() leave. x_dst and aggregated as forward_aggregated takes them.
  SageStepResult run(Sage& model, const std::vector<BlockTensors>& blocks, const torch::Tensor& x_dst,
                     const torch::Tensor& aggregated, const torch::Tensor& labels);

 private:
  std::vector<std::vector<float>> outputs_;  // each layer's (activated) output
  std::vector<std::vector<float>> forward_scratch_;
  std::vector<std::vector<float>> input_grads_;  // the gradient into each layer's input (layers >= 1)
  std::vector<float> backward_scratch_, logits_grad_;
};

}  // namespace tessera::nn
