// Node classification on a graph whose nodes have no features: each node
// gets a learnable embedding (a DistEmbedding sharded over the servers,
// updated by SparseAdam on the rows a batch touched), trained jointly with
// a dense GraphSAGE (2 layers by default) whose gradients are all-reduced (Adam).
//
//   tessera launch --ip-config ip_config.txt --part-config data/g.json \
//       "learn_embeddings --num-epochs 10 --out emb-out"
#include <torch/torch.h>

#include <cstdio>

#include <tessera/base/error.h>
#include <tessera/base/timer.h>
#include <tessera/distributed/context.h>
#include <tessera/distributed/dist_embedding.h>
#include <tessera/distributed/dist_graph.h>
#include <tessera/distributed/node_split.h>
#include <tessera/nn/sage.h>
#include <tessera/sampling/data_loader.h>
#include <tessera/train/command_line.h>
#include <tessera/train/trainer.h>

namespace td = tessera::distributed;
namespace ts = tessera::sampling;
namespace tt = tessera::train;

int main(int argc, char** argv) {
  tt::CommandLine app("learn node embeddings jointly with GraphSAGE on a featureless graph");
  tt::NodeTrainOptions o(10, {10, 10}, {}, 256, 1000, 1, 0.01, 0.2);
  o.num_hidden = 64, o.log_every = 1000;
  int64_t dim = 64;
  double sparse_lr = 0.05;
  app.add_node_train_flags(&o, "embeddings");  // the command line of `tessera train sage`
  app.add_option("--embedding-dim", &dim, "width of the learned rows (default 64)");
  app.add_option("--sparse-lr", &sparse_lr, "SparseAdam's learning rate on the rows (default 0.05)");
  if (const int code = app.parse(argc, argv); code >= 0) return code;

  try {
    std::vector<int64_t> fanouts, eval_fanouts;
    tt::validate(o, &fanouts, &eval_fanouts);
    auto ctx = tt::join_job(o);
    td::DistGraph g(*ctx);
    const td::NodeSplits split = td::split_masks(*ctx, g);  // this trainer's shares of the masks

    // One row per node, on the servers that own the node.
    td::DistEmbedding emb(*ctx, "node_emb", dim, ctx->book().node_policy(0), {"uniform", -1, 1, o.seed});
    td::SparseAdam sparse(*ctx, {&emb}, sparse_lr);

    const ts::DistNeighborSampler sampler(*ctx, {fanouts}), eval_sampler(*ctx, {eval_fanouts});
    ts::LoaderOptions lo = tt::loader_options(*ctx, o);
    lo.feature = "";  // no features: the inputs are embedding rows
    ts::DistDataLoader loader(*ctx, sampler, split.train, lo);
    int64_t total_train = 0;
    const int64_t steps = tt::equalize_steps(*ctx, loader, o.max_batches, &total_train);

    torch::manual_seed(o.seed);
    tessera::nn::SageOptions so;
    so.in_feats = dim, so.hidden = o.num_hidden, so.num_layers = o.num_layers, so.dropout = o.dropout;
    so.num_classes = tt::count_classes(*ctx, g.ndata("label").name());
    tessera::nn::Sage model(so);
    tt::broadcast_parameters(*model, ctx->collectives());
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

    // The batch's blocks, and its input nodes' embedding rows as a leaf
    // whose gradient goes to the sparse optimizer. `rows` owns the memory.
    struct Inputs {
      std::vector<tessera::nn::BlockTensors> blocks;
      tessera::Array rows;
      torch::Tensor x;
    };
    auto inputs_of = [&](const ts::MiniBatch& b) {
      Inputs in;
      in.blocks = tt::blocks_of(b);
      in.rows = emb.lookup(b.blocks[0].src_nodes.data(), b.blocks[0].num_src());
      in.x = tt::rows_of(in.rows);
      return in;
    };
    ts::LoaderOptions elo = lo;
    elo.batch_size = o.eval_batch_size;
    auto evaluate = [&](const std::vector<int64_t>& ids) {
      sparse.flush();  // evaluate the rows as trained
      return tt::accuracy(*ctx, *model, eval_sampler, ids, elo, [&](const ts::MiniBatch& b) {
        const Inputs in = inputs_of(b);
        return model->forward(in.blocks, in.x);
      });
    };
    const std::string out_dir = tt::out_dir_or_default(o.out_dir, "embeddings-" + g.graph_name());
    tessera::run::RunLog log = tt::open_run_log(*ctx, out_dir, "learn_embeddings", tt::to_json(o));
    tt::EpochLoop loop(*ctx, log, {o.num_epochs, o.log_every, o.eval_every});
    model->train();
    const tt::RunSummary summary = loop.run(
        loader, steps,
        [&](const ts::MiniBatch& b) {
          Inputs in = inputs_of(b);
          in.x.requires_grad_(true);
          tt::StepResult r = tt::supervised_step(*model, adam, ctx->collectives(),
                                                 [&] { return model->forward(in.blocks, in.x); }, tt::labels_of(b));
          tessera::Timer t;
          const torch::Tensor grad = in.x.grad().contiguous();
          sparse.step(emb, b.blocks[0].src_nodes.data(), b.blocks[0].num_src(), grad.data_ptr<float>());
          r.sparse_s = t.seconds();
          return r;
        },
        [&] { return std::make_pair(evaluate(split.val), evaluate(split.test)); });
    sparse.flush();
    ctx->barrier();  // every trainer's last rows have landed
    if (ctx->rank() == 0) emb.save(out_dir + "/embeddings.npy");
    loop.finish(summary);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "learn_embeddings: %s\n", e.what());
    return 1;
  }
  return 0;
}
