#include "tessera/nn/sage.h"

#include <torch/torch.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tessera/nn/csr_aggregate.h"
#include "tessera/nn/fused_sage_conv.h"
#include "tessera/nn/model_files.h"
#include "tessera/nn/relu_dropout.h"
#include "io/staged_dir.h"
#include "tessera/base/error.h"

namespace tessera::nn {

namespace F = torch::nn::functional;
using nlohmann::json;

CsrReduce sage_reduce(const std::string& aggregator) {
  if (aggregator == "mean") return CsrReduce::kMean;
  if (aggregator == "gcn") return CsrReduce::kGcnMean;
  fail("GraphSAGE: unknown aggregator '{}' (expected mean or gcn)", aggregator);
}

void validate(const SageOptions& o) {
  if (o.in_feats <= 0) fail("Sage options: in_feats must be positive, got {}", o.in_feats);
  if (o.num_classes <= 0) fail("Sage options: num_classes must be positive, got {}", o.num_classes);
  if (o.num_layers < 1) fail("Sage options: num_layers must be at least 1, got {}", o.num_layers);
  if (o.num_layers > 1 && o.hidden <= 0) fail("Sage options: hidden must be positive, got {}", o.hidden);
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) fail("Sage options: dropout must be in [0, 1), got {}", o.dropout);
  sage_reduce(o.aggregator);
}

BlockTensors block_view(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices, int64_t num_src) {
  if (indptr.empty()) fail("block_view: indptr is empty (it needs num_dst + 1 entries)");
  const auto opts = torch::TensorOptions().dtype(torch::kInt64);
  BlockTensors b;
  // from_blob wants a mutable pointer; nothing here writes through it.
  b.indptr = torch::from_blob(const_cast<int64_t*>(indptr.data()), {static_cast<int64_t>(indptr.size())}, opts);
  b.indices = torch::from_blob(const_cast<int64_t*>(indices.data()), {static_cast<int64_t>(indices.size())}, opts);
  b.num_dst = static_cast<int64_t>(indptr.size()) - 1;
  b.num_src = num_src;
  return b;
}

namespace {

// Cost of aggregating one float (a gathered or scattered element of a random
// row: memory bound) in GEMM multiply-adds (compute bound). Measured about
// 17-23 on a 2-core x86 host with libtorch 1.13; the choice only flips near
// the break-even, where both orders cost about the same anyway.
constexpr double kAggregateCostInGemmMacs = 20.0;

}  // namespace

bool linear_first_is_cheaper(int64_t num_src, int64_t num_dst, int64_t nnz, int64_t in, int64_t out, bool x_grad,
                             bool w_grad) {
  // fc_neigh's GEMM runs forward, again for the weight's gradient, and again
  // for the input's. The aggregation runs forward, and backward whenever
  // its input needs a gradient: after fc_neigh that is whenever anything does.
  const double gemm_passes = 1.0 + w_grad + x_grad;
  const double gemm = static_cast<double>(in) * out * gemm_passes;
  const double agg = kAggregateCostInGemmMacs * static_cast<double>(nnz);
  const double linear_first = gemm * num_src + agg * out * (1.0 + (x_grad || w_grad));
  const double aggregate_first = gemm * num_dst + agg * in * (1.0 + x_grad);
  return linear_first < aggregate_first;
}

SageConvImpl::SageConvImpl(int64_t in_feats, int64_t out_feats, const std::string& aggregator)
    : in_feats_(in_feats), out_feats_(out_feats), gcn_(sage_reduce(aggregator) == CsrReduce::kGcnMean) {
  if (in_feats <= 0 || out_feats <= 0)
    fail("SageConv: feature sizes must be positive, got {} -> {}", in_feats, out_feats);
  const auto linear = torch::nn::LinearOptions(in_feats, out_feats).bias(false);
  if (!gcn_) fc_self = register_module("fc_self", torch::nn::Linear(linear));
  fc_neigh = register_module("fc_neigh", torch::nn::Linear(linear));
  bias = register_parameter("bias", torch::zeros({out_feats}));
  reset_parameters();
}

void SageConvImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double gain = torch::nn::init::calculate_gain(torch::kReLU);
  if (fc_self) torch::nn::init::xavier_uniform_(fc_self->weight, gain);
  torch::nn::init::xavier_uniform_(fc_neigh->weight, gain);
  bias.zero_();
}

torch::Tensor SageConvImpl::forward(const torch::Tensor& x_src, const torch::Tensor& indptr,
                                    const torch::Tensor& indices, int64_t num_dst, LinearOrder order) {
  if (x_src.dim() != 2 || x_src.size(1) != in_feats_)
    fail("SageConv: input has shape {}, expected [num_src, {}]", c10::str(x_src.sizes()), in_feats_);
  if (num_dst < 0 || num_dst > x_src.size(0))
    fail("SageConv: {} destinations but only {} source rows (destinations are the first sources)", num_dst,
         x_src.size(0));
  if (indptr.dim() != 1 || indptr.size(0) != num_dst + 1)
    fail("SageConv: indptr has shape {}, expected [{}] for {} destinations", c10::str(indptr.sizes()), num_dst + 1,
         num_dst);
  // Aggregation and fc_neigh commute, so either may go first.
  bool linear_first = order == LinearOrder::kLinearFirst;
  if (order == LinearOrder::kAuto) {
    const bool grad = torch::GradMode::is_enabled();
    linear_first = linear_first_is_cheaper(x_src.size(0), num_dst, indices.numel(), in_feats_, out_feats_,
                                           grad && x_src.requires_grad(), grad && fc_neigh->weight.requires_grad());
  }

  return fused_sage_conv(x_src, indptr, indices, num_dst, gcn_ ? torch::Tensor() : fc_self->weight,
                         fc_neigh->weight, bias, reduce(), linear_first);
}

torch::Tensor SageConvImpl::forward_aggregated(const torch::Tensor& x_dst, const torch::Tensor& aggregated,
                                               const std::optional<ReluDropout>& then) {
  if (aggregated.dim() != 2 || aggregated.size(1) != in_feats_)
    fail("SageConv: aggregated rows have shape {}, expected [num_dst, {}]", c10::str(aggregated.sizes()), in_feats_);
  return fused_sage_conv_aggregated(gcn_ ? torch::Tensor() : x_dst, aggregated, gcn_ ? torch::Tensor() : fc_self->weight,
                                    fc_neigh->weight, bias, then);
}

SageImpl::SageImpl(const SageOptions& options) : options_(options) {
  validate(options);
  const int n = options.num_layers;
  for (int i = 0; i < n; ++i) {
    const int64_t in = i == 0 ? options.in_feats : options.hidden;
    const int64_t out = i == n - 1 ? options.num_classes : options.hidden;
    layers_.push_back(register_module("layer" + std::to_string(i), SageConv(in, out, options.aggregator)));
  }
}

torch::Tensor SageImpl::forward_layer(size_t i, const BlockTensors& block, const torch::Tensor& h) {
  if (i >= layers_.size()) fail("Sage: layer {} of a {}-layer model", i, layers_.size());
  if (h.dim() != 2 || h.size(0) != block.num_src)
    fail("Sage: layer {} gets {} input rows but its block has {} sources", i, h.dim() == 2 ? h.size(0) : -1,
         block.num_src);
  return with_context(
      [&] { return fmt::format("GraphSAGE layer {} ({} destination and {} source nodes)", i, block.num_dst, block.num_src); },
      [&] {
        torch::Tensor out = layers_[i]->forward(h, block.indptr, block.indices, block.num_dst);
        if (i + 1 < layers_.size()) out = relu_dropout(out, options_.dropout, is_training());
        return out;
      });
}

torch::Tensor SageImpl::forward_aggregated(const std::vector<BlockTensors>& blocks, const torch::Tensor& x_dst,
                                         const torch::Tensor& aggregated) {
  if (blocks.size() != layers_.size()) fail("Sage: {} blocks for a {}-layer model", blocks.size(), layers_.size());
  if (aggregated.dim() != 2 || aggregated.size(0) != blocks[0].num_dst)
    fail("Sage: {} aggregated input rows but layer 0's block has {} destinations",
         aggregated.dim() == 2 ? aggregated.size(0) : -1, blocks[0].num_dst);
  // Layer 0 applies the activation between the layers itself, in its own node.
  const std::optional<ReluDropout> then =
      layers_.size() > 1 ? std::optional<ReluDropout>(ReluDropout{options_.dropout, is_training()}) : std::nullopt;
  torch::Tensor x = layers_[0]->forward_aggregated(x_dst, aggregated, then);
  for (size_t i = 1; i < layers_.size(); ++i) x = forward_layer(i, blocks[i], x);
  return x;
}

torch::Tensor SageImpl::forward(const std::vector<BlockTensors>& blocks, torch::Tensor x) {
  if (blocks.size() != layers_.size()) fail("Sage: {} blocks for a {}-layer model", blocks.size(), layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) x = forward_layer(i, blocks[i], x);
  return x;
}

namespace {

constexpr const char* kFormat = "tessera-sage";
constexpr int kVersion = 1;

const json& field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) fail("{}: missing field '{}'", where, key);
  return *it;
}


}  // namespace

void save_sage(Sage& model, const SageOptions& options, const std::string& dir) {
  validate(options);
  const SageOptions& m = model->options();
  if (m.in_feats != options.in_feats || m.hidden != options.hidden || m.num_classes != options.num_classes ||
      m.num_layers != options.num_layers || m.aggregator != options.aggregator)
    fail("save_sage: options ({} -> {} x{} -> {}, {}) do not describe the model ({} -> {} x{} -> {}, {})",
         options.in_feats, options.hidden, options.num_layers, options.num_classes, options.aggregator, m.in_feats,
         m.hidden, m.num_layers, m.num_classes, m.aggregator);
  const json config = {{"format", kFormat},          {"version", kVersion},
                       {"in_feats", options.in_feats}, {"hidden", options.hidden},
                       {"num_classes", options.num_classes}, {"num_layers", options.num_layers},
                       {"dropout", options.dropout},  {"aggregator", options.aggregator}};
  save_model_files(model.ptr(), config, dir);
}

Sage load_sage(const std::string& dir, SageOptions* out) {
  const std::string config_path = dir + "/config.json";
  std::ifstream in(config_path);
  if (!in) fail("{}: cannot open (was {} written by save_sage?)", config_path, dir);
  SageOptions o;
  try {
    const json j = json::parse(in);
    if (field(j, "format", config_path).get<std::string>() != kFormat)
      fail("{}: format is '{}', expected '{}'", config_path, j["format"].get<std::string>(), kFormat);
    const int version = field(j, "version", config_path).get<int>();
    if (version != kVersion) fail("{}: version {} is not supported (expected {})", config_path, version, kVersion);
    o.in_feats = field(j, "in_feats", config_path).get<int64_t>();
    o.hidden = field(j, "hidden", config_path).get<int64_t>();
    o.num_classes = field(j, "num_classes", config_path).get<int64_t>();
    o.num_layers = field(j, "num_layers", config_path).get<int>();
    o.dropout = field(j, "dropout", config_path).get<double>();
    o.aggregator = field(j, "aggregator", config_path).get<std::string>();
  } catch (const json::exception& e) {
    fail("{}: {}", config_path, e.what());
  }
  Sage model(o);  // validates the options
  const std::string model_path = dir + "/model.pt";
  try {
    torch::load(model, model_path);
  } catch (const c10::Error& e) {
    fail("{}: cannot load the model: {}", model_path, describe(e));
  }
  if (out != nullptr) *out = o;
  return model;
}

}  // namespace tessera::nn
