// GAT node classification on a partitioned graph, written against the
// installed Tessera SDK in the loop shape of DGL's distributed-training
// guide: initialize, DistGraph, node_split, DistDataLoader, model, gradient
// all-reduce, Adam, evaluation. Tessera ships no GAT: the attention layer
// below is plain libtorch over the sampled blocks.
//
//   tessera launch --ip-config ip_config.txt --part-config data/cora.json \
//       "train_gat --num-epochs 200 --out gat-out"
#include <torch/torch.h>

#include <CLI/CLI.hpp>

#include <cstdio>

#include <tessera/base/error.h>
#include <tessera/distributed/context.h>
#include <tessera/distributed/dist_graph.h>
#include <tessera/distributed/node_split.h>
#include <tessera/sampling/data_loader.h>
#include <tessera/train/trainer.h>

namespace ts = tessera::sampling;
namespace tt = tessera::train;

// One multi-head graph-attention layer (Velickovic et al.) over a block whose
// first num_dst sources are its destinations. Every destination also attends
// to itself, as DGL's GAT example adds self-loops.
struct GatLayerImpl : torch::nn::Module {
  GatLayerImpl(int64_t in, int64_t out, int64_t heads, double dropout)
      : heads(heads), out(out), dropout(dropout),
        fc(register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(in, heads * out).bias(false)))),
        attn_src(register_parameter("attn_src", torch::empty({1, heads, out}))),
        attn_dst(register_parameter("attn_dst", torch::empty({1, heads, out}))),
        bias(register_parameter("bias", torch::zeros({heads * out}))) {
    const double gain = std::sqrt(2.0);  // DGL's xavier_normal_ with the ReLU gain
    torch::nn::init::xavier_normal_(fc->weight, gain);
    torch::nn::init::xavier_normal_(attn_src, gain);
    torch::nn::init::xavier_normal_(attn_dst, gain);
  }

  // x: [num_src, in] -> [num_dst, heads, out]
  torch::Tensor forward(const ts::Block& block, torch::Tensor x) {
    const int64_t num_dst = static_cast<int64_t>(block.indptr.size()) - 1;
    auto i64 = torch::TensorOptions().dtype(torch::kInt64);
    const torch::Tensor indptr = torch::tensor(block.indptr, i64);
    const torch::Tensor self = torch::arange(num_dst, i64);
    const torch::Tensor src = torch::cat({torch::tensor(block.indices, i64), self});
    const torch::Tensor dst = torch::cat({torch::repeat_interleave(self, indptr.slice(0, 1) - indptr.slice(0, 0, -1)), self});

    x = torch::dropout(x, dropout, is_training());
    const torch::Tensor h = fc(x).view({-1, heads, out});
    const torch::Tensor score_src = (h * attn_src).sum(-1), score_dst = (h.slice(0, 0, num_dst) * attn_dst).sum(-1);
    torch::Tensor e = torch::leaky_relu(score_src.index_select(0, src) + score_dst.index_select(0, dst), 0.2);
    // Softmax over each destination's incoming edges.
    const torch::Tensor index = dst.unsqueeze(1).expand({-1, heads});
    const torch::Tensor max = torch::zeros({num_dst, heads}).scatter_reduce(0, index, e, "amax", false);
    torch::Tensor a = (e - max.index_select(0, dst).detach()).exp();
    a = a / torch::zeros({num_dst, heads}).index_add(0, dst, a).index_select(0, dst);
    a = torch::dropout(a, dropout, is_training());
    const torch::Tensor messages = h.index_select(0, src) * a.unsqueeze(-1);
    return torch::zeros({num_dst, heads, out}).index_add(0, dst, messages) + bias.view({1, heads, out});
  }

  int64_t heads, out;
  double dropout;
  torch::nn::Linear fc;
  torch::Tensor attn_src, attn_dst, bias;
};
TORCH_MODULE(GatLayer);

// Two layers as DGL's Cora example: heads concatenated and ELU in between,
// the output layer's heads averaged.
struct GatImpl : torch::nn::Module {
  GatImpl(int64_t in, int64_t hidden, int64_t classes, int64_t heads, double dropout)
      : l1(register_module("l1", GatLayer(in, hidden, heads, dropout))),
        l2(register_module("l2", GatLayer(hidden * heads, classes, 1, dropout))) {}
  torch::Tensor forward(const ts::MiniBatch& batch) {
    torch::Tensor h = torch::elu(l1(batch.blocks[0], tt::features_of(batch)).flatten(1));
    return l2(batch.blocks[1], h).mean(1);
  }
  GatLayer l1, l2;
};
TORCH_MODULE(Gat);

int main(int argc, char** argv) {
  CLI::App app("GAT node classification on a partitioned graph");
  tt::NodeTrainOptions o;
  o.num_epochs = 200, o.num_hidden = 8, o.fanout = "-1", o.batch_size = 1000, o.lr = 0.005, o.dropout = 0.6,
  o.weight_decay = 5e-4, o.eval_every = 50, o.log_every = 1000;
  int64_t heads = 8;
  app.add_option("--part-config", o.part_config, "1-partition config (standalone; launched: the launcher's)");
  app.add_flag("--standalone", o.standalone, "one process, no servers");
  app.add_option("--num-epochs", o.num_epochs);
  app.add_option("--num-hidden", o.num_hidden, "units per head");
  app.add_option("--num-heads", heads);
  app.add_option("--fanout", o.fanout, "neighbours per layer; -1: all");
  app.add_option("--batch-size", o.batch_size);
  app.add_option("--lr", o.lr);
  app.add_option("--dropout", o.dropout);
  app.add_option("--weight-decay", o.weight_decay);
  app.add_option("--eval-every", o.eval_every);
  app.add_option("--seed", o.seed);
  app.add_option("--out", o.out_dir, "where metrics.jsonl goes")->required();
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<int64_t> fanouts, eval_fanouts;
    tt::validate(o, &fanouts, &eval_fanouts);
    auto ctx = tt::join_job(o);
    tessera::distributed::DistGraph g(*ctx);
    const tessera::distributed::NodeSplits split = tessera::distributed::split_masks(*ctx, g);  // this trainer's shares

    const ts::DistNeighborSampler sampler(*ctx, {fanouts});
    ts::LoaderOptions lo;
    lo.batch_size = o.batch_size;
    lo.seed = o.seed;
    ts::DistDataLoader loader(*ctx, sampler, split.train, lo);
    int64_t total_train = 0;
    const int64_t steps = tt::common_steps(*ctx, loader.batches_per_epoch(), split.train.size(), -1, &total_train);
    loader.limit_batches(steps);

    torch::manual_seed(o.seed);
    Gat model(g.ndata("feat").spec().row_elems(), o.num_hidden, tt::count_classes(*ctx, g.ndata("label").name()), heads,
              o.dropout);
    tt::broadcast_parameters(*model, ctx->collectives());
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

    auto evaluate = [&](const std::vector<int64_t>& ids) {
      return tt::accuracy(*ctx, *model, sampler, ids, lo, [&](const ts::MiniBatch& b) { return model->forward(b); });
    };
    tt::RunLog log = tt::open_run_log(*ctx, o.out_dir);
    tt::EpochLoop loop(*ctx, log, {o.num_epochs, o.log_every, o.eval_every});
    model->train();
    const tt::RunSummary summary = loop.run(
        loader, steps,
        [&](const ts::MiniBatch& b) {
          return tt::supervised_step(*model, adam, ctx->collectives(), [&] { return model->forward(b); },
                                     tt::labels_of(b));
        },
        [&] { return std::make_pair(evaluate(split.val), evaluate(split.test)); });
    loop.finish(summary);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "train_gat: %s\n", e.what());
    return 1;
  }
  return 0;
}
