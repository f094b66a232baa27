// R-GCN for entity classification, as DGL's RelGraphConv and DistDGL's R-GCN example build it: an input layer
// (a per-type linear projection of node features where a type has them, learnable embedding rows where it has
// none), then RelGraphConv layers with basis decomposition, self-loop, layer norm, ReLU and dropout, logits out
// of the last. RelGraphConv never materialises a weight per edge (DGL's low_mem idea, always on): edges are
// grouped into (relation, destination) pairs, each pair's sources are averaged by the CSR kernel (the paper's
// 1/|N_i^r| normalisation), and each relation's pairs go through one GEMM with that relation's weight.
//
// A public header whose API is libtorch's: it includes only the libtorch headers its declarations need (a program
// includes <torch/torch.h> for the rest). A RelBlock owns its tensors; modules are libtorch modules (shared handles)
// and keep no reference to the blocks or inputs they are given. A module is used by one thread at a time, as any
// torch module. Errors are tessera::Error naming the field, relation, node type or shape at fault (validate,
// rel_block, forward), or the file save_rgcn could not write.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::nn {

struct RgcnOptions {
  int64_t hidden = 16;
  int64_t num_classes = 0;
  int64_t num_rels = 0;
  int64_t num_bases = -1;  // <= 0 or >= num_rels: one full weight per relation
  int num_layers = 2;
  double dropout = 0.0;
  bool self_loop = false;
  bool layer_norm = false;
  // Node types with input features, and their widths; every other type's
  // inputs are embedding rows of width `hidden`.
  std::map<std::string, int64_t> feature_dims;
};

// Throws tessera::Error naming the first bad field.
void validate(const RgcnOptions& options);

// A sampled block's edges grouped by (relation, destination) pair, relation
// major: pair q has the edges [pair_indptr[q], pair_indptr[q+1]) with
// sources `indices` and destination pair_dst[q]; relation r owns pairs
// [rel_pairs[r], rel_pairs[r+1]). Owns its tensors.
struct RelBlock {
  torch::Tensor pair_indptr, indices, pair_dst;
  std::vector<int64_t> rel_pairs;
  int64_t num_dst = 0, num_src = 0;
};

// `indptr` / `indices`: the block's CSR by destination; `etypes`: each edge's
// relation (empty: all relation 0). Errors name the bad relation.
RelBlock rel_block(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices,
                   const std::vector<int32_t>& etypes, int64_t num_src, int64_t num_rels);

class RelGraphConvImpl : public torch::nn::Module {
 public:
  RelGraphConvImpl(int64_t in, int64_t out, int64_t num_rels, int64_t num_bases, bool self_loop, bool layer_norm);

  // h: float32 [num_src, in]; returns [num_dst, out] before activation.
  torch::Tensor forward(const RelBlock& block, const torch::Tensor& h);
  // The same from what forward() derives from h: each relation's pair means
  // ([its pairs, in], undefined for a relation without pairs) and the
  // destinations' own rows h[0, num_dst).
  torch::Tensor combine(const RelBlock& block, const std::vector<torch::Tensor>& relation_means,
                        const torch::Tensor& h_dst);
  // Per-relation weights [num_rels, in, out] (from the bases if any).
  torch::Tensor relation_weights();

  torch::Tensor weight;          // [num_bases or num_rels, in, out]
  torch::Tensor coefficients;    // [num_rels, num_bases], undefined without bases
  torch::Tensor loop_weight;     // [in, out], undefined without self-loop
  torch::Tensor bias;            // [out]
  torch::nn::LayerNorm norm{nullptr};

 private:
  int64_t in_, out_, num_rels_;
};
TORCH_MODULE(RelGraphConv);

// One node type's inputs in a batch: rows (features or embedding rows) and
// their positions among the input layer's sources, ascending (the fused
// first layer takes the destinations as a prefix of every type's rows).
struct TypedRows {
  std::string ntype;
  torch::Tensor positions;  // int64 [n]
  torch::Tensor rows;       // float32 [n, width]
};

class RgcnImpl : public torch::nn::Module {
 public:
  explicit RgcnImpl(const RgcnOptions& options);

  // The input layer: [num_src, hidden] in source order from every type's rows.
  torch::Tensor embed(const std::vector<TypedRows>& inputs, int64_t num_src);
  // blocks[0] is the input layer. Returns logits for blocks.back().num_dst nodes.
  // The first layer aggregates each type's raw rows and projects only the
  // pair means (aggregate_first, the default); the other way embeds every
  // input node first. Both compute the same function.
  torch::Tensor forward(const std::vector<RelBlock>& blocks, const std::vector<TypedRows>& inputs,
                        bool aggregate_first = true);

  const RgcnOptions& options() const { return options_; }

 private:
  torch::Tensor first_layer(const RelBlock& block, const std::vector<TypedRows>& inputs);
  torch::Tensor project(const std::string& ntype, const torch::Tensor& rows);

  RgcnOptions options_;
  std::map<std::string, torch::nn::Linear> projections_;
  std::vector<RelGraphConv> layers_;
};
TORCH_MODULE(Rgcn);

// dir/model.pt and dir/config.json, staged and renamed into place.
void save_rgcn(Rgcn& model, const std::string& dir);

}  // namespace tessera::nn
