#include "tessera/nn/link_decoder.h"

#include <fmt/ranges.h>

#include "tessera/base/error.h"

namespace tessera::nn {

LinkDecoderImpl::LinkDecoderImpl(const std::string& kind, int64_t dim) : kind_(kind) {
  if (kind == "mlp") {
    hidden_ = register_module("hidden", torch::nn::Linear(dim, dim));
    out_ = register_module("out", torch::nn::Linear(dim, 1));
  } else if (kind != "dot") {
    fail("--decoder '{}': expected dot or mlp", kind);
  }
}

torch::Tensor LinkDecoderImpl::forward(const torch::Tensor& u, const torch::Tensor& v) {
  if (u.sizes() != v.sizes() || u.dim() != 2)
    fail("link decoder: pair embeddings of shapes {} and {} (expected two [n, dim])", fmt::join(u.sizes(), "x"),
         fmt::join(v.sizes(), "x"));
  if (kind_ == "dot") return (u * v).sum(1);
  return out_->forward(torch::relu(hidden_->forward(u * v))).squeeze(1);
}

}  // namespace tessera::nn
