// Link prediction's decoders: the score of a node pair from its two embeddings, as DGL's unsupervised
// GraphSAGE (a dot product) and OGB's link examples (an MLP over the element-wise product) score them.
//
// A public header whose API is libtorch's. A module is used by one thread at a time, as any torch module.
// Errors are tessera::Error naming the decoder (an unknown kind) or the shapes at fault.
#pragma once

#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

namespace tessera::nn {

class LinkDecoderImpl : public torch::nn::Module {
 public:
  // kind: "dot" (no parameters) or "mlp" (dim -> dim -> 1 over h_u * h_v, ReLU between).
  LinkDecoderImpl(const std::string& kind, int64_t dim);

  // Scores [n] of pairs (u[i], v[i]) given their embeddings u, v: [n, dim].
  torch::Tensor forward(const torch::Tensor& u, const torch::Tensor& v);

  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  torch::nn::Linear hidden_{nullptr}, out_{nullptr};
};
TORCH_MODULE(LinkDecoder);

}  // namespace tessera::nn
