#include <cstdlib>
#include <memory>
#include <string>

#include "tools/node_train_flags.h"
#include "tessera/train/link_train.h"
#include "tessera/train/rgcn_train.h"
#include "tessera/train/sage_train.h"
#include "tools/commands.h"

namespace tessera {

namespace {

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
  tools::add_node_train_flags(cmd, *o, "sage");
  cmd->add_option("--aggregator", o->aggregator, "mean (default) or gcn");
  cmd->add_flag("--replace", o->replace, "sample neighbours with replacement");
  tools::add_feature_cache_flags(cmd, *o);
  cmd->callback([o] { run_trainer(*o, &train::run_sage_training); });
}

void add_rgcn(CLI::App& train) {
  auto o = std::make_shared<train::RgcnTrainOptions>();
  auto ignored = std::make_shared<std::string>();
  auto ignored_flag = std::make_shared<bool>(false);
  CLI::App* cmd = train.add_subcommand(
      "rgcn", "R-GCN entity classification on a heterogeneous graph (DistDGL's rgcn example, ogbn-mag)");
  tools::add_node_train_flags(cmd, *o, "rgcn");
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
  tools::add_feature_cache_flags(cmd, *o);
  // The callback owns every variable an option writes to: CLI11 keeps only
  // references, and a flag parsed into a freed one corrupts the heap.
  cmd->callback([o, ignored, ignored_flag] { run_trainer(*o, &train::run_rgcn_training); });
}

void add_link(CLI::App& train) {
  auto o = std::make_shared<train::LinkTrainOptions>();
  CLI::App* cmd = train.add_subcommand(
      "link", "link prediction: GraphSAGE embeddings scored by a dot product or an MLP, ranked on held-out edges "
              "(DGL's unsupervised GraphSAGE, OGB's link protocol)");
  tools::add_node_train_flags(cmd, *o, "link");
  cmd->add_option("--decoder", o->decoder, "dot (default) or mlp: how a pair of embeddings is scored");
  cmd->add_option("--num-negs,--num_negs", o->num_negs, "negative destinations per training edge (default 1)");
  cmd->add_option("--eval-negatives,--eval_negatives", o->eval_negatives,
                  "negative destinations each held-out edge is ranked against (default 100)");
  cmd->add_option("--exclude", o->exclude,
                  "edges left out of a batch's blocks: reverse (the batch's edges both ways, default), self or none");
  cmd->add_flag("--logistic-regression,--logistic_regression", o->logistic_regression,
                "after training, fit a logistic regression on the train_mask nodes' embeddings and report its "
                "validation and test accuracy (DGL's unsupervised protocol)");
  tools::add_feature_cache_flags(cmd, *o);
  cmd->callback([o] { run_trainer(*o, &train::run_link_training); });
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
  add_link(*train);
}

}  // namespace tessera
