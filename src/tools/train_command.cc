#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "tessera/train/rgcn_train.h"
#include "tessera/train/sage_train.h"
#include "tools/commands.h"

namespace tessera {

namespace {

// The flags both trainers share, one canonical spelling each (first), with
// the spellings of DGL's graphsage and rgcn examples as aliases. Defaults
// shown in --help are the options' own, which differ per trainer.
void add_node_train_flags(CLI::App* cmd, train::NodeTrainOptions& o, const std::string& model) {
  auto dflt = [](auto value) { return fmt::format(" (default {})", value); };
  cmd->add_option("--graph-name,--graph_name", o.graph_name, "name of the partitioned graph (checked against it)");
  cmd->add_option("--ip-config,--ip_config", o.ip_config,
                  "ip_config; under tessera launch it must name the launcher's (default: the launcher's)");
  cmd->add_option("--part-config,--part_config,--conf-path,--conf_path", o.part_config,
                  "partition config <out>/<graph>.json; under tessera launch it must name the launcher's");
  cmd->add_flag("--standalone", o.standalone, "one process, no servers: needs a 1-partition config");
  cmd->add_option("--num-epochs,--num_epochs,--n-epochs,--n_epochs", o.num_epochs, "epochs" + dflt(o.num_epochs));
  cmd->add_option("--num-hidden,--num_hidden,--n-hidden,--n_hidden", o.num_hidden,
                  "hidden units" + dflt(o.num_hidden));
  cmd->add_option("--num-layers,--num_layers,--n-layers,--n_layers", o.num_layers, "layers" + dflt(o.num_layers));
  cmd->add_option("--fanout,--fan-out,--fan_out", o.fanout,
                  "neighbours per layer, input layer first; one value for all" + dflt(o.fanout));
  cmd->add_option("--eval-fanout,--eval_fanout,--eval-fan-out,--eval_fan_out,--validation-fanout,--validation_fanout",
                  o.eval_fanout,
                  "neighbours per layer for validation/test; -1: all" +
                      (o.eval_fanout.empty() ? std::string(" (default: --fanout)") : dflt(o.eval_fanout)));
  cmd->add_option("--batch-size,--batch_size", o.batch_size, "seeds per mini-batch" + dflt(o.batch_size));
  cmd->add_option("--eval-batch-size,--eval_batch_size,--batch-size-eval,--batch_size_eval", o.eval_batch_size,
                  "seeds per evaluation batch" + dflt(o.eval_batch_size));
  cmd->add_option("--log-every,--log_every", o.log_every, "steps between progress lines" + dflt(o.log_every));
  cmd->add_option("--eval-every,--eval_every", o.eval_every, "epochs between evaluations" + dflt(o.eval_every));
  cmd->add_option("--lr", o.lr, "Adam learning rate of the dense weights" + dflt(o.lr));
  cmd->add_option("--dropout", o.dropout, "dropout" + dflt(o.dropout));
  cmd->add_option("--weight-decay,--weight_decay,--wd,--l2norm", o.weight_decay,
                  "Adam weight decay of the dense weights" + dflt(o.weight_decay));
  cmd->add_option("--num-samplers,--num_samplers,--num-workers,--num_workers", o.num_samplers,
                  "sampler threads per trainer (default: the launcher's --num-samplers, else 0)");
  cmd->add_option("--seed", o.seed, "random seed" + dflt(o.seed));
  cmd->add_option("--num-threads,--num_threads", o.num_threads, "intra-op threads (default TESSERA_NUM_THREADS or 2)");
  cmd->add_option("--out", o.out_dir, "where metrics.jsonl and model/ go (default " + model + "-<graph name>)");
  cmd->add_option("--max-batches,--max_batches", o.max_batches, "cap on steps per epoch (benchmarks)");
}

// Runs a trainer from a command's callback: a part config is needed unless
// the launcher gives one.
template <typename Options>
void run_trainer(const Options& o, int (*run)(const Options&)) {
  if (o.part_config.empty() && std::getenv("TESSERA_PART_CONFIG") == nullptr)
    throw CLI::ValidationError("--part-config", "is required (or run under tessera launch)");
  const int code = run(o);
  if (code != 0) throw CLI::RuntimeError(code);
}

void add_sage(CLI::App& train) {
  auto o = std::make_shared<train::SageTrainOptions>();
  CLI::App* cmd = train.add_subcommand("sage", "GraphSAGE node classification (DistDGL's graphsage example)");
  add_node_train_flags(cmd, *o, "sage");
  cmd->add_option("--aggregator", o->aggregator, "mean (default) or gcn");
  cmd->add_flag("--replace", o->replace, "sample neighbours with replacement");
  cmd->callback([o] { run_trainer(*o, &train::run_sage_training); });
}

void add_rgcn(CLI::App& train) {
  auto o = std::make_shared<train::RgcnTrainOptions>();
  auto ignored = std::make_shared<std::string>();
  auto ignored_flag = std::make_shared<bool>(false);
  CLI::App* cmd = train.add_subcommand(
      "rgcn", "R-GCN entity classification on a heterogeneous graph (DistDGL's rgcn example, ogbn-mag)");
  add_node_train_flags(cmd, *o, "rgcn");
  cmd->add_option("--dataset", o->dataset, "dataset name (informational, as in DGL)");
  cmd->add_option("--predict-category,--predict_category", o->predict_category,
                  "the labelled node type (default: the only one with labels)");
  cmd->add_option("--num-bases,--num_bases,--n-bases,--n_bases", o->num_bases,
                  "basis matrices (default -1: one weight per relation)");
  cmd->add_option("--fanout-mode,--fanout_mode", o->fanout_mode,
                  "total (across all in-edges, default) or per-etype (each edge type, as sample_etype_neighbors)");
  cmd->add_option("--sparse-lr,--sparse_lr", o->sparse_lr, "learning rate of the node embeddings (default 0.01)");
  cmd->add_option("--sparse-optimizer,--sparse_optimizer", o->sparse_optimizer, "adam (default) or adagrad");
  cmd->add_flag("--use-self-loop,--use_self_loop", o->self_loop, "add a self-loop weight to every layer");
  cmd->add_flag("--layer-norm,--layer_norm", o->layer_norm, "layer norm in every layer");
  cmd->add_flag("--low-mem,--low_mem", *ignored_flag,
                "accepted for DGL's command line: relations are always computed per relation, never per edge");
  cmd->add_flag("--sparse-embedding,--sparse_embedding", *ignored_flag,
                "accepted for DGL's command line: featureless types always learn DistEmbedding rows");
  cmd->add_option("--num-servers,--num_servers", *ignored, "accepted for DGL's command line (the launcher's flag)");
  // The callback owns every variable an option writes to: CLI11 keeps only
  // references, and a flag parsed into a freed one corrupts the heap.
  cmd->callback([o, ignored, ignored_flag] { run_trainer(*o, &train::run_rgcn_training); });
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
