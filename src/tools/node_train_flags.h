// The command line of NodeTrainOptions for CLI11 (Debian's libcli11-dev):
// the flags of `tessera train sage` / `tessera train rgcn`, and through
// tessera/train/command_line.h of any program on the SDK. Internal header.
//
// Contract: add_node_train_flags() registers options that write into `o`
// when the app parses, so `o` must outlive the parse; defaults shown in
// --help are `o`'s values at the call. Canonical spelling first, DGL's
// spellings of both of its examples as aliases. Throws nothing itself;
// CLI11 reports bad values when parsing.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tessera/train/node_train_options.h"
#include "tools/flag_types.h"

namespace tessera::tools {

// `model` names the default output directory (<model>-<graph name>).
inline void add_node_train_flags(CLI::App* cmd, train::NodeTrainOptions& o, const std::string& model) {
  auto dflt = [](auto value) { return fmt::format(" (default {})", value); };
  cmd->add_option("--graph-name,--graph_name", o.graph_name, "name of the partitioned graph (checked against it)");
  cmd->add_option("--ip-config,--ip_config", o.ip_config,
                  "ip_config; under tessera launch it must name the launcher's (default: the launcher's)");
  cmd->add_option("--part-config,--part_config,--conf-path,--conf_path", o.part_config,
                  "partition config <out>/<graph>.json; under tessera launch it must name the launcher's");
  cmd->add_flag("--standalone", o.standalone, "one process, no servers: needs a 1-partition config");
  cmd->add_option("--num-epochs,--num_epochs,--n-epochs,--n_epochs", o.num_epochs, "epochs" + dflt(o.num_epochs));
  cmd->add_option("--num-hidden,--num_hidden,--n-hidden,--n_hidden", o.num_hidden,
                  "hidden units" + dflt(o.num_hidden) +
                      "; GraphSAGE's fastest kernels (AVX-512 CPUs) take layers up to 16 wide (the first layer in "
                      "one pass) and 48 (narrow GEMMs); wider layers run the BLAS's GEMMs (the run's log and final "
                      "record name each layer's kernels)");
  cmd->add_option("--num-layers,--num_layers,--n-layers,--n_layers", o.num_layers, "layers" + dflt(o.num_layers));
  add_fanouts_option(cmd, "--fanout,--fan-out,--fan_out", &o.fanout,
                     "neighbours per layer, input layer first; one value for all" + dflt(o.fanout.to_string()));
  add_fanouts_option(cmd, "--eval-fanout,--eval_fanout,--eval-fan-out,--eval_fan_out,--validation-fanout,--validation_fanout",
                     &o.eval_fanout,
                     "neighbours per layer for validation/test; -1: all" +
                         (o.eval_fanout.empty() ? std::string(" (default: --fanout)") : dflt(o.eval_fanout.to_string())));
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
  cmd->add_option("--num-threads,--num_threads", o.num_threads, "intra-op threads (default TESSERA_NUM_THREADS, else OMP_NUM_THREADS, else half the host's cores over the trainers on it, at least 1)");
  cmd->add_option("--out", o.out_dir, "where metrics.jsonl and model/ go (default " + model + "-<graph name>)");
  cmd->add_option("--max-batches,--max_batches", o.max_batches, "cap on steps per epoch (benchmarks)");
  cmd->add_option("--checkpoint-every,--checkpoint_every", o.checkpoint.every,
                  "epochs between checkpoints of the model, optimizers, node embeddings and random state; 0: none (default 1)");
  cmd->add_option("--checkpoint-dir,--checkpoint_dir", o.checkpoint.dir,
                  "where each trainer and server keeps its checkpoints (default <out>/checkpoints, made absolute)");
  cmd->add_option("--keep-checkpoints,--keep_checkpoints", o.checkpoint.keep,
                  "checkpoints kept per trainer and server (default 2)");
  cmd->add_flag("--resume", o.checkpoint.resume,
                "continue from the newest checkpoint every trainer holds intact (automatic after a restart by "
                "tessera launch --max-restarts)");
}

// The remote-feature cache's flags (`train sage`, `train link`, `train rgcn`).
inline void add_feature_cache_flags(CLI::App* cmd, train::FeatureCacheOptions& o) {
  cmd->add_option("--cache-remote-features,--cache_remote_features", o.cache_remote_features,
                  "share of every other machine's nodes (largest in-degree first) whose features each trainer keeps "
                  "in memory; 0: pull every remote row every time, as DistDGL (default 0.25)");
  cmd->add_option("--feature-cache-mb,--feature_cache_mb", o.feature_cache_mb,
                  "most megabytes of remote feature rows each trainer keeps (default 1024)");
}

}  // namespace tessera::tools
