#include <memory>

#include "tessera/tools/commands.h"
#include "tessera/train/rgcn_train.h"
#include "tessera/train/sage_train.h"

namespace tessera {

namespace {

void add_sage(CLI::App& train) {
  auto o = std::make_shared<train::SageTrainOptions>();
  CLI::App* cmd = train.add_subcommand("sage", "GraphSAGE node classification (DistDGL's graphsage example)");
  cmd->add_option("--graph-name,--graph_name", o->graph_name, "name of the partitioned graph (checked against it)");
  cmd->add_option("--ip-config,--ip_config", o->ip_config, "ip_config (set by tessera launch; informational)");
  cmd->add_option("--part-config,--part_config", o->part_config, "partition config <out>/<graph>.json");
  cmd->add_flag("--standalone", o->standalone, "one process, no servers: needs a 1-partition config");
  cmd->add_option("--num-epochs,--num_epochs", o->num_epochs, "epochs (default 20)");
  cmd->add_option("--num-hidden,--num_hidden", o->num_hidden, "hidden units (default 16)");
  cmd->add_option("--num-layers,--num_layers", o->num_layers, "layers (default 2)");
  cmd->add_option("--fan-out,--fan_out", o->fan_out, "neighbours per layer, input layer first (default 10,25)");
  cmd->add_option("--eval-fan-out,--eval_fan_out,--eval-fanout", o->eval_fan_out,
                  "neighbours per layer for validation/test (default -1: all)");
  cmd->add_option("--aggregator", o->aggregator, "mean (default) or gcn");
  cmd->add_option("--batch-size,--batch_size", o->batch_size, "seeds per mini-batch (default 1000)");
  cmd->add_option("--batch-size-eval,--batch_size_eval", o->batch_size_eval, "seeds per evaluation batch (10000)");
  cmd->add_option("--log-every,--log_every", o->log_every, "steps between progress lines (default 20)");
  cmd->add_option("--eval-every,--eval_every", o->eval_every, "epochs between evaluations (default 5)");
  cmd->add_option("--lr", o->lr, "Adam learning rate (default 0.003)");
  cmd->add_option("--dropout", o->dropout, "dropout (default 0.5)");
  cmd->add_option("--weight-decay,--weight_decay,--wd", o->weight_decay, "Adam weight decay (default 0)");
  cmd->add_option("--num-samplers,--num_samplers,--num-workers,--num_workers", o->num_samplers,
                  "sampler threads per trainer (default: the launcher's --num-samplers, else 0)");
  cmd->add_flag("--replace", o->replace, "sample neighbours with replacement");
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
  cmd->add_option("--num-threads,--num_threads", o->num_threads, "intra-op threads (default TESSERA_NUM_THREADS or 2)");
  cmd->add_option("--out", o->out_dir, "where metrics.jsonl and model/ go (default sage-<graph name>)");
  cmd->add_option("--max-batches,--max_batches", o->max_batches, "cap on steps per epoch (benchmarks)");
  cmd->callback([o] {
    if (o->part_config.empty() && std::getenv("TESSERA_PART_CONFIG") == nullptr)
      throw CLI::ValidationError("--part-config", "is required (or run under tessera launch)");
    const int code = train::run_sage_training(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

void add_rgcn(CLI::App& train) {
  auto o = std::make_shared<train::RgcnTrainOptions>();
  auto ignored = std::make_shared<std::string>();
  auto ignored_flag = std::make_shared<bool>(false);
  CLI::App* cmd = train.add_subcommand(
      "rgcn", "R-GCN entity classification on a heterogeneous graph (DistDGL's rgcn example, ogbn-mag)");
  cmd->add_option("--graph-name,--graph_name", o->graph_name, "name of the partitioned graph (checked against it)");
  cmd->add_option("--dataset", o->dataset, "dataset name (informational, as in DGL)");
  cmd->add_option("--ip-config,--ip_config", o->ip_config, "ip_config (set by tessera launch; informational)");
  cmd->add_option("--part-config,--part_config,--conf-path,--conf_path", o->part_config,
                  "partition config <out>/<graph>.json");
  cmd->add_flag("--standalone", o->standalone, "one process, no servers: needs a 1-partition config");
  cmd->add_option("--predict-category,--predict_category", o->predict_category,
                  "the labelled node type (default: the only one with labels)");
  cmd->add_option("--n-epochs,--n_epochs,--num-epochs", o->num_epochs, "epochs (default 3)");
  cmd->add_option("--n-hidden,--n_hidden", o->num_hidden, "hidden units and embedding width (default 16)");
  cmd->add_option("--n-layers,--n_layers", o->num_layers, "RelGraphConv layers (default 2)");
  cmd->add_option("--n-bases,--n_bases", o->num_bases, "basis matrices (default -1: one weight per relation)");
  cmd->add_option("--fanout", o->fanout, "neighbours per layer, input layer first (default 4,4)");
  cmd->add_option("--validation-fanout,--validation_fanout", o->validation_fanout,
                  "neighbours per layer for validation/test (default: --fanout)");
  cmd->add_option("--fanout-mode,--fanout_mode", o->fanout_mode,
                  "total (across all in-edges, default) or per-etype (each edge type, as sample_etype_neighbors)");
  cmd->add_option("--batch-size,--batch_size", o->batch_size, "seeds per mini-batch (default 100)");
  cmd->add_option("--eval-batch-size,--eval_batch_size", o->eval_batch_size, "seeds per evaluation batch (128)");
  cmd->add_option("--log-every,--log_every", o->log_every, "steps between progress lines (default 20)");
  cmd->add_option("--eval-every,--eval_every", o->eval_every, "epochs between evaluations (default 1)");
  cmd->add_option("--lr", o->lr, "Adam learning rate of the dense weights (default 0.01)");
  cmd->add_option("--sparse-lr,--sparse_lr", o->sparse_lr, "learning rate of the node embeddings (default 0.01)");
  cmd->add_option("--sparse-optimizer,--sparse_optimizer", o->sparse_optimizer, "adam (default) or adagrad");
  cmd->add_option("--dropout", o->dropout, "dropout (default 0)");
  cmd->add_option("--l2norm,--weight-decay", o->l2norm, "weight decay of the dense weights (default 0)");
  cmd->add_flag("--use-self-loop,--use_self_loop", o->self_loop, "add a self-loop weight to every layer");
  cmd->add_flag("--layer-norm,--layer_norm", o->layer_norm, "layer norm in every layer");
  cmd->add_flag("--low-mem,--low_mem", *ignored_flag,
                "accepted for DGL's command line: relations are always computed per relation, never per edge");
  cmd->add_flag("--sparse-embedding,--sparse_embedding", *ignored_flag,
                "accepted for DGL's command line: featureless types always learn DistEmbedding rows");
  cmd->add_option("--num-servers,--num_servers", *ignored, "accepted for DGL's command line (the launcher's flag)");
  cmd->add_option("--num-samplers,--num_samplers,--num-workers,--num_workers", o->num_samplers,
                  "sampler threads per trainer (default: the launcher's --num-samplers, else 0)");
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
  cmd->add_option("--num-threads,--num_threads", o->num_threads, "intra-op threads (default TESSERA_NUM_THREADS or 2)");
  cmd->add_option("--out", o->out_dir, "where metrics.jsonl, model/ and embeddings/ go (default rgcn-<graph name>)");
  cmd->add_option("--max-batches,--max_batches", o->max_batches, "cap on steps per epoch (benchmarks)");
  // The callback owns every variable an option writes to: CLI11 keeps only
  // references, and a flag parsed into a freed one corrupts the heap.
  cmd->callback([o, ignored, ignored_flag] {
    if (o->part_config.empty() && std::getenv("TESSERA_PART_CONFIG") == nullptr)
      throw CLI::ValidationError("--part-config", "is required (or run under tessera launch)");
    const int code = train::run_rgcn_training(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* train = app.add_subcommand("train", "train a model on a partitioned graph");
  // As with argparse, a repeated flag takes its last value, so scripts can
  // append overrides to a shared set of flags.
  train->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  train->require_subcommand(1);
  add_sage(*train);
  add_rgcn(*train);
}

}  // namespace tessera
