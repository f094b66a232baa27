// GraphSAGE as DGL builds it: SAGEConv layers ("mean" or "gcn" aggregator) stacked as in DistDGL's
// node-classification example (ReLU and dropout between layers, logits out of the last). Layers consume
// sampled blocks in CSR form: destinations are the first num_dst of the block's sources.
//
// A public header whose API is libtorch's: it includes only the libtorch headers its declarations need (a program
// includes <torch/torch.h> for the rest). block_view() returns tensors that view the caller's vectors, which must
// outlive them and any autograd graph built from them; the rest return new tensors or modules (libtorch's shared
// handles) and keep no reference to their inputs. A module is used by one thread at a time, as any torch module.
// Errors are tessera::Error naming the option, layer, shape or file at fault (validate, forward, save_sage,
// load_sage; libtorch's load errors reduced to their first line).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/nn/csr_reduce.h"
#include "tessera/nn/fused_sage_conv.h"

namespace tessera::nn {

struct SageOptions {
  int64_t in_feats = 0;
  int64_t hidden = 0;
  int64_t num_classes = 0;
  int num_layers = 2;
  double dropout = 0.5;
  std::string aggregator = "mean";  // "mean" | "gcn"
};

// The reduction of an aggregator's layers: "mean" is kMean, "gcn" kGcnMean
// (its layers have no fc_self: the destination's row joins the mean). The
// one mapping of an aggregator's name; fails naming it otherwise.
CsrReduce sage_reduce(const std::string& aggregator);

// Throws tessera::Error naming the first bad field.
void validate(const SageOptions& options);

// One sampled block: in-edges of num_dst destinations from num_src sources
// (destination d is source d). indptr int64 [num_dst + 1], indices int64
// [nnz] into the sources.
struct BlockTensors {
  torch::Tensor indptr, indices;
  int64_t num_dst = 0;
  int64_t num_src = 0;
};

// Views of the vectors without copying: the vectors must outlive the
// returned tensors, including any autograd graph built from them (the
// aggregation's backward reads them), and must not be resized meanwhile.
// Temporaries would dangle at once, so those overloads are deleted.
BlockTensors block_view(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices, int64_t num_src);
BlockTensors block_view(std::vector<int64_t>&& indptr, const std::vector<int64_t>& indices, int64_t num_src) = delete;
BlockTensors block_view(const std::vector<int64_t>& indptr, std::vector<int64_t>&& indices, int64_t num_src) = delete;
BlockTensors block_view(std::vector<int64_t>&& indptr, std::vector<int64_t>&& indices, int64_t num_src) = delete;

// Where fc_neigh is applied relative to the aggregation. Both give the same
// result; they differ in cost. kAuto asks linear_first_is_cheaper.
enum class LinearOrder { kAuto, kLinearFirst, kAggregateFirst };

// Whether fc_neigh (in -> out) before the aggregation costs less than after
// it, for a block of nnz edges from num_src sources to num_dst destinations;
// x_grad / w_grad: whether the backward needs the input's / the weight's
// gradient. Linear first runs the GEMM on num_src rows and aggregates
// out-wide rows; aggregating first runs it on num_dst rows only and
// aggregates in-wide rows. DGL's rule (linear first iff in > out) is the
// answer for full-graph blocks (num_src == num_dst) but not for sampled
// ones, where num_src is many times num_dst.
bool linear_first_is_cheaper(int64_t num_src, int64_t num_dst, int64_t nnz, int64_t in, int64_t out, bool x_grad,
                             bool w_grad);

class SageConvImpl : public torch::nn::Module {
 public:
  SageConvImpl(int64_t in_feats, int64_t out_feats, const std::string& aggregator);

  // x_src: float32 [num_src, in_feats]; returns [num_dst, out_feats].
  torch::Tensor forward(const torch::Tensor& x_src, const torch::Tensor& indptr, const torch::Tensor& indices,
                        int64_t num_dst, LinearOrder order = LinearOrder::kAuto);

  // The layer on rows a loader aggregated already (LoaderOptions::
  // aggregate_inputs with reduce()): x_dst [num_dst, in_feats] the
  // destinations' own rows (unused, may be undefined, for "gcn"), aggregated
  // [num_dst, in_feats]. Returns [num_dst, out_feats], passed through
  // relu_dropout in the layer's own node with `then`.
  torch::Tensor forward_aggregated(const torch::Tensor& x_dst, const torch::Tensor& aggregated,
                                   const std::optional<ReluDropout>& then = std::nullopt);

  // The aggregation this layer applies: kMean, or kGcnMean for "gcn".
  CsrReduce reduce() const { return gcn_ ? CsrReduce::kGcnMean : CsrReduce::kMean; }

  // Xavier-uniform weights with ReLU gain and a zero bias, as DGL does.
  void reset_parameters();

  int64_t in_feats() const { return in_feats_; }
  int64_t out_feats() const { return out_feats_; }

  // As in DGL >= 0.7: both linears without bias and one bias added to the sum
  // (the same function as fc_self carrying it, and "gcn" has no fc_self).
  torch::nn::Linear fc_self{nullptr};  // null for "gcn"
  torch::nn::Linear fc_neigh{nullptr};
  torch::Tensor bias;

 private:
  int64_t in_feats_, out_feats_;
  bool gcn_;
};
TORCH_MODULE(SageConv);

class SageImpl : public torch::nn::Module {
 public:
  explicit SageImpl(const SageOptions& options);

  // blocks[0] is the input layer: x has blocks[0].num_src rows. Returns
  // logits for blocks.back().num_dst nodes. Needs one block per layer.
  torch::Tensor forward(const std::vector<BlockTensors>& blocks, torch::Tensor x);

  // forward() when a loader aggregated the first layer's inputs
  // (LoaderOptions::aggregate_inputs with reduce()): x_dst and aggregated
  // have blocks[0].num_dst rows (x_dst unused for "gcn").
  torch::Tensor forward_aggregated(const std::vector<BlockTensors>& blocks, const torch::Tensor& x_dst,
                                   const torch::Tensor& aggregated);

  // The aggregation of the model's layers.
  CsrReduce reduce() const { return layers_.front()->reduce(); }

  // Layer i alone (with ReLU and dropout unless it is the last), for
  // layer-wise inference over the whole graph.
  torch::Tensor forward_layer(size_t i, const BlockTensors& block, const torch::Tensor& h);

  size_t num_layers() const { return layers_.size(); }
  // Layer i's module (i < num_layers()).
  SageConv& layer(size_t i) { return layers_.at(i); }
  const SageOptions& options() const { return options_; }

 private:
  SageOptions options_;
  std::vector<SageConv> layers_;
};
TORCH_MODULE(Sage);

// Writes dir/model.pt (torch::save) and dir/config.json (the options) into a
// staging directory renamed into place when complete, so a crash never
// leaves a half-written model under `dir`.
void save_sage(Sage& model, const SageOptions& options, const std::string& dir);

// Rebuilds the model from dir/config.json and loads dir/model.pt; the options
// go to *out when it is not null.
Sage load_sage(const std::string& dir, SageOptions* out);

}  // namespace tessera::nn
