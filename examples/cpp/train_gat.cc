// GAT node classification on a partitioned graph, written against the
// installed Tessera SDK in the loop shape of DGL's distributed-training
// guide: initialize, DistGraph, node_split, DistDataLoader, model, gradient
// all-reduce, Adam, evaluation. Tessera ships no GAT: the attention layer
// below is plain libtorch over the sampled blocks.
//
//   tessera launch --ip-config ip_config.txt --part-config data/cora.json \
//       "train_gat --num-epochs 200 --out gat-out"
#include <torch/torch.h>

#include <cstdio>

#include <tessera/base/error.h>
#include <tessera/distributed/context.h>
#include <tessera/distributed/dist_graph.h>
#include <tessera/distributed/node_split.h>
#include <tessera/sampling/data_loader.h>
#include <tessera/train/command_line.h>
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
  torch::Tensor forward(const tessera::nn::BlockTensors& block, torch::Tensor x) {
    const int64_t num_dst = block.num_dst;
    const torch::Tensor self = torch::arange(num_dst, torch::kInt64);
    const torch::Tensor degrees = block.indptr.slice(0, 1) - block.indptr.slice(0, 0, -1);
    const torch::Tensor src = torch::cat({block.indices, self});
    const torch::Tensor dst = torch::cat({torch::repeat_interleave(self, degrees), self});

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

// Layers as DGL's Cora example: hidden layers' heads concatenated with ELU,
// one output head; one layer per sampled block.
struct GatImpl : torch::nn::Module {
  GatImpl(int num_layers, int64_t in, int64_t hidden, int64_t classes, int64_t heads, double dropout) {
    for (int i = 0; i < num_layers; ++i) {
      const bool last = i + 1 == num_layers;
      layers.push_back(register_module("l" + std::to_string(i),
                                       GatLayer(i == 0 ? in : hidden * heads, last ? classes : hidden,
                                                last ? 1 : heads, dropout)));
    }
  }
  torch::Tensor forward(const ts::MiniBatch& batch) {
    const std::vector<tessera::nn::BlockTensors> blocks = tt::blocks_of(batch);  // views, no copies
    torch::Tensor h = tt::features_of(batch);
    for (size_t i = 0; i + 1 < layers.size(); ++i) h = torch::elu(layers[i](blocks[i], h).flatten(1));
    return layers.back()(blocks.back(), h).mean(1);
  }
  std::vector<GatLayer> layers;
};
TORCH_MODULE(Gat);

int main(int argc, char** argv) {
  tt::CommandLine app("GAT node classification on a partitioned graph");
  // DGL's GAT on Cora: 200 epochs, all neighbours, lr 0.005, dropout 0.6, 8 heads of 8 units, L2 5e-4.
  tt::NodeTrainOptions o(200, {-1}, {}, 1000, 1000, 50, 0.005, 0.6);
  o.num_hidden = 8, o.weight_decay = 5e-4, o.log_every = 1000;
  int64_t heads = 8;
  app.add_node_train_flags(&o, "gat");  // the command line of `tessera train sage`
  app.add_option("--num-heads", &heads, "attention heads of the hidden layer (default 8)");
  if (const int code = app.parse(argc, argv); code >= 0) return code;

  try {
    std::vector<int64_t> fanouts, eval_fanouts;
    tt::validate(o, &fanouts, &eval_fanouts);
    auto ctx = tt::join_job(o);
    tessera::distributed::DistGraph g(*ctx);
    const tessera::distributed::NodeSplits split = tessera::distributed::split_masks(*ctx, g);  // this trainer's shares

    const ts::DistNeighborSampler sampler(*ctx, {fanouts}), eval_sampler(*ctx, {eval_fanouts});
    const ts::LoaderOptions lo = tt::loader_options(*ctx, o);
    ts::DistDataLoader loader(*ctx, sampler, split.train, lo);
    int64_t total_train = 0;
    const int64_t steps = tt::equalize_steps(*ctx, loader, o.max_batches, &total_train);

    torch::manual_seed(o.seed);
    const int64_t classes = tt::count_classes(*ctx, g.ndata("label").name());
    Gat model(o.num_layers, g.ndata("feat").spec().row_elems(), o.num_hidden, classes, heads, o.dropout);
    tt::broadcast_parameters(*model, ctx->collectives());
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

    ts::LoaderOptions elo = lo;
    elo.batch_size = o.eval_batch_size;
    auto evaluate = [&](const std::vector<int64_t>& ids) {
      return tt::accuracy(*ctx, *model, eval_sampler, ids, elo, [&](const ts::MiniBatch& b) { return model->forward(b); });
    };
    tessera::run::RunLog log =
        tt::open_run_log(*ctx, tt::out_dir_or_default(o.out_dir, "gat-" + g.graph_name()), "train_gat", tt::to_json(o));
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
