#include "tessera/nn/rgcn.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "tessera/nn/csr_aggregate.h"
#include "tessera/nn/model_files.h"
#include "tessera/nn/relu_dropout.h"
#include "tessera/base/error.h"

namespace tessera::nn {

namespace F = torch::nn::functional;
using nlohmann::json;

void validate(const RgcnOptions& o) {
  if (o.hidden <= 0) fail("R-GCN options: hidden must be positive, got {}", o.hidden);
  if (o.num_classes <= 0) fail("R-GCN options: num_classes must be positive, got {}", o.num_classes);
  if (o.num_rels <= 0) fail("R-GCN options: num_rels must be positive, got {}", o.num_rels);
  if (o.num_layers < 1) fail("R-GCN options: num_layers must be at least 1, got {}", o.num_layers);
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) fail("R-GCN options: dropout must be in [0, 1), got {}", o.dropout);
  for (const auto& [ntype, dim] : o.feature_dims)
    if (dim <= 0) fail("R-GCN options: node type '{}' has feature width {}", ntype, dim);
}

RelBlock rel_block(const std::vector<int64_t>& indptr, const std::vector<int64_t>& indices,
                   const std::vector<int32_t>& etypes, int64_t num_src, int64_t num_rels) {
  if (indptr.empty()) fail("rel_block: indptr is empty (it needs num_dst + 1 entries)");
  const int64_t num_dst = static_cast<int64_t>(indptr.size()) - 1;
  const int64_t nnz = static_cast<int64_t>(indices.size());
  if (!etypes.empty() && static_cast<int64_t>(etypes.size()) != nnz)
    fail("rel_block: {} edge types for {} edges", etypes.size(), nnz);
  auto rel_of = [&](int64_t e) -> int64_t { return etypes.empty() ? 0 : etypes[e]; };

  // Counting sort of the edges by relation; destinations stay ascending
  // within a relation, so each pair's edges end up contiguous.
  std::vector<int64_t> rel_edges(num_rels + 1, 0);
  for (int64_t e = 0; e < nnz; ++e) {
    const int64_t r = rel_of(e);
    if (r < 0 || r >= num_rels) fail("rel_block: edge {} has relation {} but the model has {}", e, r, num_rels);
    ++rel_edges[r + 1];
  }
  for (int64_t r = 0; r < num_rels; ++r) rel_edges[r + 1] += rel_edges[r];
  std::vector<int64_t> fill(rel_edges.begin(), rel_edges.end() - 1);
  std::vector<int64_t> sorted_src(nnz), sorted_dst(nnz);
  for (int64_t d = 0; d < num_dst; ++d)
    for (int64_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      const int64_t pos = fill[rel_of(e)]++;
      sorted_src[pos] = indices[e];
      sorted_dst[pos] = d;
    }

  RelBlock b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.rel_pairs.assign(num_rels + 1, 0);
  std::vector<int64_t> pair_indptr, pair_dst;
  for (int64_t r = 0; r < num_rels; ++r) {
    for (int64_t pos = rel_edges[r]; pos < rel_edges[r + 1]; ++pos)
      if (pos == rel_edges[r] || sorted_dst[pos] != sorted_dst[pos - 1]) {
        pair_indptr.push_back(pos);
        pair_dst.push_back(sorted_dst[pos]);
      }
    b.rel_pairs[r + 1] = static_cast<int64_t>(pair_dst.size());
  }
  pair_indptr.push_back(nnz);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  b.pair_indptr = torch::tensor(pair_indptr, i64);
  b.indices = torch::tensor(sorted_src, i64);
  b.pair_dst = torch::tensor(pair_dst, i64);
  return b;
}

RelGraphConvImpl::RelGraphConvImpl(int64_t in, int64_t out, int64_t num_rels, int64_t num_bases, bool self_loop,
                                   bool layer_norm)
    : in_(in), out_(out), num_rels_(num_rels) {
  const double gain = std::sqrt(2.0);  // calculate_gain('relu'), as DGL initialises
  const bool bases = num_bases > 0 && num_bases < num_rels;
  weight = register_parameter("weight", torch::empty({bases ? num_bases : num_rels, in, out}));
  torch::nn::init::xavier_uniform_(weight, gain);
  if (bases) {
    coefficients = register_parameter("coefficients", torch::empty({num_rels, num_bases}));
    torch::nn::init::xavier_uniform_(coefficients, gain);
  }
  if (self_loop) {
    loop_weight = register_parameter("loop_weight", torch::empty({in, out}));
    torch::nn::init::xavier_uniform_(loop_weight, gain);
  }
  bias = register_parameter("bias", torch::zeros({out}));
  if (layer_norm) norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({out})));
}

torch::Tensor RelGraphConvImpl::relation_weights() {
  if (!coefficients.defined()) return weight;
  return coefficients.mm(weight.view({weight.size(0), in_ * out_})).view({num_rels_, in_, out_});
}

torch::Tensor RelGraphConvImpl::forward(const RelBlock& block, const torch::Tensor& h) {
  if (h.size(0) != block.num_src || h.size(1) != in_)
    fail("RelGraphConv: input is {} x {}, expected {} x {}", h.size(0), h.size(1), block.num_src, in_);
  const torch::Tensor means = csr_mean(h, block.pair_indptr, block.indices);  // [pairs, in]
  std::vector<torch::Tensor> relation_means(num_rels_);
  for (int64_t r = 0; r < num_rels_; ++r) {
    const int64_t begin = block.rel_pairs[r], count = block.rel_pairs[r + 1] - begin;
    if (count > 0) relation_means[r] = means.narrow(0, begin, count);
  }
  return combine(block, relation_means, h.narrow(0, 0, block.num_dst));
}

torch::Tensor RelGraphConvImpl::combine(const RelBlock& block, const std::vector<torch::Tensor>& relation_means,
                                        const torch::Tensor& h_dst) {
  const torch::Tensor w = relation_weights();
  std::vector<torch::Tensor> messages;
  for (int64_t r = 0; r < num_rels_; ++r)
    if (relation_means[r].defined())
      messages.push_back(with_context([&] { return fmt::format("relation {}", r); },
                                      [&] { return relation_means[r].mm(w[r]); }));
  torch::Tensor out = torch::zeros({block.num_dst, out_}, h_dst.options());
  if (!messages.empty()) out = out.index_add(0, block.pair_dst, torch::cat(messages));
  if (norm) out = norm(out);
  out = out + bias;
  if (loop_weight.defined()) out = out + h_dst.mm(loop_weight);
  return out;
}

RgcnImpl::RgcnImpl(const RgcnOptions& options) : options_(options) {
  validate(options_);
  for (const auto& [ntype, dim] : options_.feature_dims)
    projections_.emplace(ntype, register_module("project_" + ntype, torch::nn::Linear(dim, options_.hidden)));
  for (int i = 0; i < options_.num_layers; ++i) {
    const bool last = i + 1 == options_.num_layers;
    layers_.push_back(register_module(
        "layer" + std::to_string(i),
        RelGraphConv(options_.hidden, last ? options_.num_classes : options_.hidden, options_.num_rels,
                     options_.num_bases, options_.self_loop, options_.layer_norm)));
  }
}

torch::Tensor RgcnImpl::project(const std::string& ntype, const torch::Tensor& rows) {
  const auto p = projections_.find(ntype);
  if (p != projections_.end()) return p->second(rows);
  if (rows.size(1) != options_.hidden)
    fail("R-GCN: embedding rows of node type '{}' have width {}, expected {}", ntype, rows.size(1), options_.hidden);
  return rows;
}

torch::Tensor RgcnImpl::embed(const std::vector<TypedRows>& inputs, int64_t num_src) {
  std::vector<torch::Tensor> rows, positions;
  for (const TypedRows& t : inputs) {
    rows.push_back(project(t.ntype, t.rows));
    positions.push_back(t.positions);
  }
  const torch::Tensor all_positions = torch::cat(positions);
  if (all_positions.size(0) != num_src)
    fail("R-GCN: the typed inputs cover {} nodes, the input layer has {}", all_positions.size(0), num_src);
  // Row j of the concatenation belongs at all_positions[j]: invert once and
  // gather, so the backward is one scatter rather than one per type.
  torch::Tensor order = torch::empty({num_src}, torch::kInt64);
  order.index_put_({all_positions}, torch::arange(num_src, torch::kInt64));
  return torch::cat(rows).index_select(0, order);
}

// The input layer fused into the first RelGraphConv. A relation's sources
// all have one node type, and the projection is affine, so the mean of
// projected rows is the projection of the mean of raw rows: aggregate each
// relation straight from its type's rows, project only the pair means, and
// embed only the destinations (for the self-loop). No [num_src, hidden]
// tensor is built, and the projection runs on pairs, not on every input.
torch::Tensor RgcnImpl::first_layer(const RelBlock& block, const std::vector<TypedRows>& inputs) {
  // Source position -> (input group, row within the group).
  const int64_t num_src = block.num_src;
  torch::Tensor group_of = torch::full({num_src}, -1, torch::kInt64);
  torch::Tensor row_of = torch::empty({num_src}, torch::kInt64);
  std::vector<TypedRows> destinations;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TypedRows& t = inputs[k];
    const int64_t n = t.positions.size(0);
    group_of.index_fill_(0, t.positions, static_cast<int64_t>(k));
    row_of.index_put_({t.positions}, torch::arange(n, torch::kInt64));
    // Positions are ascending within a group: the destinations are a prefix.
    const int64_t dst = t.positions.lt(block.num_dst).sum().item<int64_t>();
    if (dst > 0) destinations.push_back({t.ntype, t.positions.narrow(0, 0, dst), t.rows.narrow(0, 0, dst)});
  }
  if (group_of.lt(0).any().item<bool>()) fail("R-GCN: the typed inputs do not cover all {} input nodes", num_src);
  const int64_t* group = group_of.data_ptr<int64_t>();
  const int64_t* indptr = block.pair_indptr.data_ptr<int64_t>();
  const int64_t* indices = block.indices.data_ptr<int64_t>();

  std::vector<torch::Tensor> relation_means(options_.num_rels);
  for (int64_t r = 0; r < options_.num_rels; ++r) {
    const int64_t p0 = block.rel_pairs[r], p1 = block.rel_pairs[r + 1];
    if (p1 == p0) continue;
    const int64_t e0 = indptr[p0], e1 = indptr[p1];
    const int64_t k = group[indices[e0]];
    const torch::Tensor sources = block.indices.narrow(0, e0, e1 - e0);
    if (!group_of.index_select(0, sources).eq(k).all().item<bool>())
      fail("R-GCN: relation {} has sources of several node types", r);
    const torch::Tensor local_indptr = block.pair_indptr.narrow(0, p0, p1 - p0 + 1) - e0;
    relation_means[r] = with_context(
        [&] { return fmt::format("relation {} from node type '{}' ({} edges)", r, inputs[k].ntype, e1 - e0); },
        [&] { return project(inputs[k].ntype, csr_mean(inputs[k].rows, local_indptr, row_of.index_select(0, sources))); });
  }
  return layers_[0]->combine(block, relation_means, embed(destinations, block.num_dst));
}

torch::Tensor RgcnImpl::forward(const std::vector<RelBlock>& blocks, const std::vector<TypedRows>& inputs,
                                bool aggregate_first) {
  if (blocks.size() != layers_.size())
    fail("R-GCN: {} blocks for {} layers", blocks.size(), layers_.size());
  auto layer = [&](size_t i) {
    return fmt::format("R-GCN layer {} ({} destination and {} source nodes)", i, blocks[i].num_dst, blocks[i].num_src);
  };
  torch::Tensor h = with_context([&] { return layer(0); }, [&] {
    return aggregate_first ? first_layer(blocks[0], inputs)
                           : layers_[0]->forward(blocks[0], embed(inputs, blocks[0].num_src));
  });
  for (size_t i = 1; i < layers_.size(); ++i)
    h = with_context([&] { return layer(i); },
                     [&] { return layers_[i]->forward(blocks[i], relu_dropout(h, options_.dropout, is_training())); });
  return h;
}

void save_rgcn(Rgcn& model, const std::string& dir) {
  const RgcnOptions& o = model->options();
  const json config = {{"format", "tessera-rgcn"}, {"version", 1},
                       {"hidden", o.hidden},         {"num_classes", o.num_classes},
                       {"num_rels", o.num_rels},     {"num_bases", o.num_bases},
                       {"num_layers", o.num_layers}, {"dropout", o.dropout},
                       {"self_loop", o.self_loop},   {"layer_norm", o.layer_norm},
                       {"feature_dims", o.feature_dims}};
  save_model_files(model.ptr(), config, dir);
}

}  // namespace tessera::nn
