// R-GCN pieces: RelGraphConv against a dense per-edge reference (forward and
// gradients, with bases and self-loop), relation grouping of a block, and a
// real training step on a heterogeneous graph whose sparse embedding update
// changes exactly the rows of the batch.
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/nn/rgcn.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/gen/generators.h"
#include "tessera/partition/partition.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "test_util.h"

namespace tessera {
namespace {

// A random block: 7 destinations (destination 2 has no edges), 12 sources,
// edges of 3 relations in any order within a destination.
struct RandomBlock {
  std::vector<int64_t> indptr{0}, indices;
  std::vector<int32_t> etypes;
  int64_t num_dst = 7, num_src = 12, num_rels = 3;
  RandomBlock() {
    Rng rng(5);
    for (int64_t d = 0; d < num_dst; ++d) {
      const int64_t degree = d == 2 ? 0 : 1 + static_cast<int64_t>(rng.below(6));
      for (int64_t k = 0; k < degree; ++k) {
        indices.push_back(static_cast<int64_t>(rng.below(num_src)));
        etypes.push_back(static_cast<int32_t>(rng.below(num_rels)));
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
  }
};

TEST(Rgcn, RelBlockGroupsEdgesByRelationThenDestination) {
  const RandomBlock b;
  const nn::RelBlock rb = nn::rel_block(b.indptr, b.indices, b.etypes, b.num_src, b.num_rels);
  const int64_t pairs = rb.pair_dst.size(0);
  ASSERT_EQ(rb.rel_pairs.back(), pairs);
  ASSERT_EQ(rb.pair_indptr.size(0), pairs + 1);
  // The (relation, destination) pairs are exactly those with edges, and each
  // pair's sources are that pair's edges' sources.
  std::multiset<std::tuple<int64_t, int64_t, int64_t>> expected, found;
  for (int64_t d = 0; d < b.num_dst; ++d)
    for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e) expected.insert({b.etypes[e], d, b.indices[e]});
  std::set<std::pair<int64_t, int64_t>> seen_pairs;
  for (int64_t r = 0; r < b.num_rels; ++r)
    for (int64_t q = rb.rel_pairs[r]; q < rb.rel_pairs[r + 1]; ++q) {
      const int64_t d = rb.pair_dst[q].item<int64_t>();
      EXPECT_TRUE(seen_pairs.insert({r, d}).second) << "pair (" << r << ", " << d << ") twice";
      for (int64_t e = rb.pair_indptr[q].item<int64_t>(); e < rb.pair_indptr[q + 1].item<int64_t>(); ++e)
        found.insert({r, d, rb.indices[e].item<int64_t>()});
    }
  EXPECT_EQ(found, expected);
  std::vector<int32_t> bad = b.etypes;
  bad[0] = 3;
  EXPECT_THROW(nn::rel_block(b.indptr, b.indices, bad, b.num_src, b.num_rels), Error);
}

// The R-GCN paper's layer, edge by edge: h_d = sum over relations r of the
// mean over d's r-edges of W_r h_src, plus bias and the self-loop.
torch::Tensor reference_layer(const RandomBlock& b, nn::RelGraphConv& conv, const torch::Tensor& h) {
  const torch::Tensor w = conv->relation_weights();
  std::vector<torch::Tensor> rows;
  for (int64_t d = 0; d < b.num_dst; ++d) {
    torch::Tensor row = conv->bias + h[d].matmul(conv->loop_weight);
    for (int64_t r = 0; r < b.num_rels; ++r) {
      std::vector<torch::Tensor> messages;
      for (int64_t e = b.indptr[d]; e < b.indptr[d + 1]; ++e)
        if (b.etypes[e] == r) messages.push_back(h[b.indices[e]].matmul(w[r]));
      if (!messages.empty()) row = row + torch::stack(messages).mean(0);
    }
    rows.push_back(row);
  }
  return torch::stack(rows);
}

TEST(Rgcn, RelGraphConvMatchesAPerEdgeReferenceForwardAndBackward) {
  torch::manual_seed(3);
  const RandomBlock b;
  nn::RelGraphConv conv(4, 5, b.num_rels, /*num_bases=*/2, /*self_loop=*/true, /*layer_norm=*/false);
  {
    torch::NoGradGuard no_grad;
    conv->bias.uniform_(-1, 1);  // a zero bias would hide a bias bug
  }
  const torch::Tensor h = torch::randn({b.num_src, 4}, torch::requires_grad());
  const torch::Tensor probe = torch::randn({b.num_dst, 5});
  const nn::RelBlock rb = nn::rel_block(b.indptr, b.indices, b.etypes, b.num_src, b.num_rels);

  const torch::Tensor out = conv->forward(rb, h);
  (out * probe).sum().backward();
  std::vector<torch::Tensor> grads{h.grad().clone()};
  for (const auto& p : conv->parameters()) grads.push_back(p.grad().clone());
  h.grad().zero_();
  for (auto& p : conv->parameters()) p.mutable_grad().zero_();

  const torch::Tensor ref = reference_layer(b, conv, h);
  (ref * probe).sum().backward();
  EXPECT_TRUE(torch::allclose(out, ref, 1e-5, 1e-5)) << out << ref;
  EXPECT_TRUE(torch::allclose(grads[0], h.grad(), 1e-5, 1e-5)) << "input gradient";
  size_t k = 1;
  for (const auto& p : conv->parameters()) {
    EXPECT_TRUE(torch::allclose(grads[k], p.grad(), 1e-5, 1e-5)) << "parameter " << k;
    ++k;
  }
  EXPECT_EQ(out.index({2}).sub(conv->bias + h[2].matmul(conv->loop_weight)).abs().max().item<float>(), 0.0f)
      << "a destination without edges gets only bias and self-loop";
}

// One real step on a small mag-like graph (1 partition, in-process): the
// loader fetches embedding rows of the featureless types, R-GCN runs
// forward and backward, SparseAdam updates the embeddings. Exactly the
// batch's rows change; every other row keeps its bits.
TEST(Rgcn, SparseEmbeddingStepChangesOnlyTheRowsOfTheBatch) {
  testing::TempDir dir;
  GenOptions g;
  g.kind = "mag-like";
  g.nodes = 3000;
  g.edges = 20000;
  g.classes = 5;
  g.feat_dim = 8;
  Dataset d = generate(g);
  add_reverse_edges(&d);
  EXPECT_EQ(d.edge_types.back().canonical(), "field_of_study:rev-has_topic:paper");
  Dataset twice = d;
  EXPECT_THROW(add_reverse_edges(&twice), Error) << "reverse edges added twice";
  PartitionOptions po;
  po.graph_name = "mag";
  po.num_parts = 1;
  po.out_dir = dir / "p1";
  partition_dataset(d, po);

  distributed::InitOptions init;
  init.standalone = true;
  init.part_config = dir / "p1/mag.json";
  auto ctx = distributed::initialize(init);
  const auto& config = ctx->config();
  const int author = static_cast<int>(std::find(config.ntypes.begin(), config.ntypes.end(), "author") -
                                      config.ntypes.begin());
  const int paper = static_cast<int>(std::find(config.ntypes.begin(), config.ntypes.end(), "paper") -
                                     config.ntypes.begin());
  const int64_t hidden = 6;
  sampling::LoaderOptions lo;
  lo.batch_size = 16;
  lo.shuffle = false;
  lo.seed_ntype = "paper";
  std::vector<std::unique_ptr<distributed::DistEmbedding>> embeddings(config.ntypes.size());
  std::vector<const distributed::DistEmbedding*> all;
  for (size_t t = 0; t < config.ntypes.size(); ++t) {
    if (static_cast<int>(t) == paper) {
      lo.typed_inputs["paper"] = "node/paper/feat";
      continue;
    }
    embeddings[t] = std::make_unique<distributed::DistEmbedding>(*ctx, "emb-" + config.ntypes[t], hidden,
                                                          ctx->book().node_policy(static_cast<int>(t)),
                                                          store::Initializer{"uniform", -1, 1, 7});
    all.push_back(embeddings[t].get());
    lo.typed_inputs[config.ntypes[t]] = embeddings[t]->name();
  }
  std::vector<int64_t> seeds;
  for (int64_t i = 0; i < 16; ++i) seeds.push_back(ctx->book().homogeneous_node(paper, i));
  sampling::SamplerOptions so;
  so.fanouts = {3, 3};
  const sampling::DistNeighborSampler sampler(*ctx, so);
  sampling::DistDataLoader loader(*ctx, sampler, seeds, lo);
  loader.start_epoch(0);
  sampling::MiniBatch batch;
  ASSERT_TRUE(loader.next(&batch));
  // Heterogeneous blocks keep every node's and edge's type.
  for (const sampling::Block& block : batch.blocks) {
    ASSERT_EQ(block.src_ntypes.size(), block.src_nodes.size());
    ASSERT_EQ(block.etypes.size(), block.indices.size());
    for (size_t i = 0; i < block.src_nodes.size(); ++i)
      EXPECT_EQ(block.src_ntypes[i], ctx->book().typed_node(block.src_nodes[i]).ntype);
    for (int64_t d = 0; d < block.num_dst; ++d)
      for (int64_t e = block.indptr[d]; e < block.indptr[d + 1]; ++e) {
        const int k = block.etypes[e];
        EXPECT_EQ(block.src_ntypes[block.indices[e]], config.etype_src(k)) << "edge type " << config.etypes[k];
        EXPECT_EQ(block.src_ntypes[d], config.etype_dst(k)) << "edge type " << config.etypes[k];
      }
  }

  const int64_t num_authors = embeddings[author]->num_embeddings();
  std::vector<int64_t> every(num_authors);
  for (int64_t i = 0; i < num_authors; ++i) every[i] = i;
  const Array before = embeddings[author]->lookup(every.data(), num_authors);

  nn::RgcnOptions mo;
  mo.hidden = hidden;
  mo.num_classes = 5;
  mo.num_rels = static_cast<int64_t>(config.etypes.size());
  mo.feature_dims = {{"paper", 8}};
  mo.self_loop = true;  // so every input row, destinations included, reaches the loss
  nn::Rgcn model(mo);
  std::vector<nn::RelBlock> blocks;
  for (const auto& b : batch.blocks) blocks.push_back(nn::rel_block(b.indptr, b.indices, b.etypes, b.num_src(), mo.num_rels));
  std::vector<nn::TypedRows> inputs;
  const sampling::TypedInputs* author_rows = nullptr;
  for (const auto& group : batch.inputs) {
    nn::TypedRows r;
    r.ntype = config.ntypes[group.ntype];
    r.positions = torch::tensor(group.positions, torch::kInt64);
    r.rows = torch::from_blob(const_cast<void*>(group.rows.raw()), {static_cast<int64_t>(group.ids.size()),
                              group.rows.numel() / static_cast<int64_t>(group.ids.size())}, torch::kFloat32)
                 .clone()
                 .requires_grad_(group.ntype != paper);
    if (group.ntype == author) author_rows = &group;
    inputs.push_back(r);
  }
  ASSERT_NE(author_rows, nullptr) << "the batch should reach some authors";
  const torch::Tensor labels = torch::from_blob(const_cast<void*>(batch.labels.raw()), {16}, torch::kInt64);
  // The fused input layer (aggregate raw rows, project pair means) computes
  // what embedding every input first does, gradients included.
  auto run = [&](bool aggregate_first) {
    model->zero_grad();
    for (auto& r : inputs)
      if (r.rows.requires_grad() && r.rows.grad().defined()) r.rows.mutable_grad().zero_();
    const torch::Tensor logits = model->forward(blocks, inputs, aggregate_first);
    torch::nn::functional::cross_entropy(logits, labels.clamp_min(0)).backward();
    std::vector<torch::Tensor> grads;
    for (auto& r : inputs)
      if (r.rows.requires_grad()) grads.push_back(r.rows.grad().clone());
    for (const auto& p : model->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    return std::make_pair(logits.detach(), grads);
  };
  const auto plain = run(false);
  const auto fused = run(true);  // leaves its gradients for the step below
  EXPECT_TRUE(torch::allclose(fused.first, plain.first, 1e-4, 1e-5)) << "logits differ";
  ASSERT_EQ(fused.second.size(), plain.second.size());
  for (size_t k = 0; k < fused.second.size(); ++k) {
    ASSERT_EQ(fused.second[k].defined(), plain.second[k].defined()) << "gradient " << k;
    if (fused.second[k].defined()) {
      EXPECT_TRUE(torch::allclose(fused.second[k], plain.second[k], 1e-4, 1e-6)) << "gradient " << k;
    }
  }

  distributed::SparseAdam optimizer(*ctx, all, 0.1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int t = batch.inputs[k].ntype;
    if (t == paper) continue;
    const torch::Tensor grad = inputs[k].rows.grad().contiguous();
    optimizer.step(*embeddings[t], batch.inputs[k].ids.data(), static_cast<int64_t>(batch.inputs[k].ids.size()),
                   grad.data_ptr<float>());
  }
  const Array after = embeddings[author]->lookup(every.data(), num_authors);
  // Rows of the batch whose gradient is not zero (ReLU can zero one).
  std::set<int64_t> in_batch;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (batch.inputs[k].ntype != author) continue;
    const torch::Tensor moved = inputs[k].rows.grad().abs().sum(1).gt(0);
    for (int64_t i = 0; i < moved.size(0); ++i)
      if (moved[i].item<bool>()) in_batch.insert(batch.inputs[k].ids[i]);
  }
  ASSERT_GT(in_batch.size(), 10u);
  const size_t row_bytes = hidden * sizeof(float);
  int64_t changed = 0, untouched = 0;
  for (int64_t i = 0; i < num_authors; ++i) {
    const bool same = std::memcmp(static_cast<const char*>(before.raw()) + i * row_bytes,
                                  static_cast<const char*>(after.raw()) + i * row_bytes, row_bytes) == 0;
    if (in_batch.count(i)) {
      changed += !same;
    } else {
      EXPECT_TRUE(same) << "author " << i << " has no gradient in the batch but its embedding changed";
      untouched += same;
    }
  }
  EXPECT_EQ(changed, static_cast<int64_t>(in_batch.size())) << "every author with a gradient should move";
  EXPECT_GT(untouched, 100);
  ctx->finalize();
}

}  // namespace
}  // namespace tessera
