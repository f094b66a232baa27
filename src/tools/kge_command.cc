// `tessera kge train | eval | partition`: DGL-KE's dglke_train /
// dglke_dist_train, dglke_eval and dglke_partition, with their flags.
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "tessera/kge/kge_train.h"
#include "tessera/kge/knowledge_graph.h"
#include "tessera/partition/partition.h"
#include "tools/commands.h"
#include "tessera/base/timer.h"

namespace tessera {
namespace {

using kge::KgeOptions;

void add_data_flags(CLI::App* cmd, KgeOptions* o) {
  cmd->add_option("--data_path,--data-path", o->data_path, "folder holding the dataset (or its parent)");
  cmd->add_option("--dataset", o->dataset, "dataset name: <data_path>/<dataset> is read when it exists");
  cmd->add_option("--format", o->format, "built_in | raw_udd_hrt | udd_hrt | openke | auto (default)");
}

void add_model_flags(CLI::App* cmd, KgeOptions* o) {
  cmd->add_option("--model_name,--model-name", o->model_name,
                  "TransE_l1, TransE_l2, DistMult, ComplEx, RotatE, RESCAL, TransR or SimplE");
  cmd->add_option("--hidden_dim,--hidden-dim", o->hidden_dim, "embedding width (default 400)");
  cmd->add_option("--gamma,-g", o->gamma, "margin of the distance models (default 12)");
  cmd->add_flag("--double_ent", o->double_ent, "entity rows twice --hidden_dim wide (RotatE, ComplEx)");
  cmd->add_flag("--double_rel", o->double_rel, "relation rows twice --hidden_dim wide");
}

void add_eval_flags(CLI::App* cmd, KgeOptions* o) {
  cmd->add_option("--batch_size_eval", o->batch_size_eval, "queries sharing sampled candidates (default 8)");
  cmd->add_option("--neg_sample_size_eval", o->neg_sample_size_eval,
                  "candidates per query: -1 (default) ranks against every entity");
  cmd->add_option("--eval_percent", o->eval_percent, "fraction of valid/test triples ranked (default 1)");
  cmd->add_flag("--no_eval_filter", o->no_eval_filter, "raw ranks: keep known triples among the candidates");
  cmd->add_option("--num_thread", o->num_thread, "threads per worker (default 0: cores / --num_proc)");
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
}

void add_train(CLI::App& kge) {
  auto o = std::make_shared<KgeOptions>();
  auto ignored = std::make_shared<std::string>();
  auto ignored_flag = std::make_shared<bool>(false);
  CLI::App* cmd = kge.add_subcommand("train", "train knowledge-graph embeddings (dglke_train / dglke_dist_train)");
  add_data_flags(cmd, o.get());
  add_model_flags(cmd, o.get());
  add_eval_flags(cmd, o.get());
  cmd->add_option("--part_config,--part-config", o->part_config,
                  "partitioned KG (`tessera kge partition`): train under tessera launch, entities on the servers");
  cmd->add_option("--ip_config,--ip-config", *ignored, "set by tessera launch (informational)");
  cmd->add_option("--lr", o->lr, "row-wise Adagrad learning rate (default 0.01)");
  cmd->add_option("--batch_size", o->batch_size, "positive triples per step (default 1024)");
  cmd->add_option("--neg_sample_size", o->neg_sample_size, "negatives per chunk (default 256)");
  cmd->add_option("--neg_chunk_size", o->neg_chunk_size, "positives sharing negatives (default: --neg_sample_size)");
  cmd->add_flag("--neg_deg_sample", o->neg_deg_sample, "add as many degree-proportional negatives");
  cmd->add_option("--loss_genre", o->loss_genre, "Logsigmoid (default), Hinge, Logistic or BCE");
  cmd->add_option("--margin,-m", o->margin, "Hinge margin (default 1)");
  cmd->add_flag("--neg_adversarial_sampling", o->adversarial, "self-adversarial negative weights");
  cmd->add_option("--adversarial_temperature,-a", o->adversarial_temperature, "-adv temperature (default 1)");
  cmd->add_flag("--pairwise", o->pairwise, "pairwise loss (Logistic or Hinge)");
  cmd->add_option("--regularization_coef", o->regularization_coef, "penalty coefficient (default 2e-6)");
  cmd->add_option("--regularization_norm", o->regularization_norm, "penalty norm (default 3)");
  cmd->add_option("--max_step", o->max_step, "steps per worker (default 80000)");
  cmd->add_option("--log_interval", o->log_interval, "steps between progress lines (default 1000)");
  cmd->add_option("--eval_interval", o->eval_interval, "steps between validations with --valid (default 10000)");
  cmd->add_flag("--valid", o->valid, "rank the validation triples every --eval_interval steps");
  cmd->add_flag("--test", o->test, "rank the test triples after training");
  cmd->add_option("--num_proc", o->num_proc, "worker threads sharing the tables, Hogwild (default 1)");
  cmd->add_flag("--async_update", o->async_update,
                "accepted for DGL-KE's command line: distributed pushes always overlap the next step");
  cmd->add_option("--force_sync_interval", o->force_sync_interval,
                  "distributed: steps between syncs of the relation replicas (default 1000)");
  CLI::Option* save_path = cmd->add_option(
      "--save_path", o->save_path,
      "where embeddings, config.json, metrics.jsonl go (default: the launcher's --run-dir, else ckpts)");
  cmd->add_flag("--no_save_emb", o->no_save_emb, "do not save the embeddings");
  cmd->add_option("--checkpoint_interval", o->checkpoint_interval,
                  "steps between checkpoints in <save_path>/checkpoint (default 10000; 0: none)");
  cmd->add_flag("--resume", o->resume, "continue from <save_path>/checkpoint");
  cmd->add_option("--num_client_proc,--num_client", *ignored, "accepted for dglke_dist_train (the launcher's --num_trainers)");
  cmd->add_flag("--rel_part,--soft_rel_part,--mix_cpu_gpu", *ignored_flag, "accepted for DGL-KE's command line");
  cmd->callback([o, ignored, ignored_flag, save_path] {
    const char* run_dir = std::getenv("TESSERA_RUN_DIR");
    if (save_path->count() == 0 && run_dir != nullptr && *run_dir != '\0') o->save_path = run_dir;
    const int code = kge::run_kge_training(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

void add_eval(CLI::App& kge) {
  auto o = std::make_shared<KgeOptions>();
  auto model_path = std::make_shared<std::string>();
  CLI::App* cmd = kge.add_subcommand("eval", "rank the test triples with saved embeddings (dglke_eval)");
  add_data_flags(cmd, o.get());
  add_eval_flags(cmd, o.get());
  cmd->add_option("--model_path,--save_path", o->save_path, "the --save_path of training (config.json, *.npy)")
      ->required();
  cmd->callback([o, model_path] {
    const int code = kge::run_kge_evaluation(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

void add_partition(CLI::App& kge) {
  auto source = std::make_shared<kge::KgSource>();
  auto options = std::make_shared<PartitionOptions>();
  options->balance_edges = true;
  CLI::App* cmd = kge.add_subcommand(
      "partition", "METIS-partition a KG's entities; each triple is stored with its tail's partition");
  cmd->add_option("--data_path,--data-path", source->data_path, "folder holding the dataset (or its parent)")
      ->required();
  cmd->add_option("--dataset", source->dataset, "dataset name: <data_path>/<dataset> is read when it exists");
  cmd->add_option("--format", source->format, "built_in | raw_udd_hrt | udd_hrt | openke | auto (default)");
  cmd->add_option("-k,--num_parts,--num-parts", options->num_parts, "number of partitions")->required();
  cmd->add_option("--part_method,--method", options->method, "metis (default) or random");
  cmd->add_option("--seed", options->seed, "random seed");
  cmd->add_option("--out,--output", options->out_dir, "output folder (default <data_path>/partitions)");
  cmd->callback([source, options] {
    check_partition_options(*options);
    Timer timer;
    Dataset d = kge::read_kg_dataset(*source);
    PartitionOptions o = *options;
    o.graph_name = d.name;
    if (o.out_dir.empty()) o.out_dir = source->data_path + "/partitions";
    const double read_s = timer.seconds();
    const PartitionReport r = partition_dataset(d, o);
    fmt::print("partitioned {} ({} entities, {} training triples) into {} parts ({}): {:.1f}% of triples cross "
               "partitions, {:.2f}s (read {:.2f}s) -> {}/{}.json\n",
               d.name, d.num_nodes(), d.num_edges(), o.num_parts, o.method, 100 * r.edge_cut_ratio(),
               read_s + r.assign_s + r.reshuffle_s + r.write_s, read_s, o.out_dir, o.graph_name);
  });
}

}  // namespace

std::vector<std::string> dglke_spellings(int argc, char** argv) {
  // CLI11 reads "-adv" as -a -d -v; DGL-KE's multi-letter single-dash flags
  // become their long names.
  static const std::map<std::string, std::string> kLong = {
      {"-adv", "--neg_adversarial_sampling"}, {"-de", "--double_ent"},          {"-dr", "--double_rel"},
      {"-rc", "--regularization_coef"},       {"-rn", "--regularization_norm"}, {"-pw", "--pairwise"}};
  std::vector<std::string> args(argv, argv + argc);
  const bool kge = argc > 1 && args[1] == "kge";
  for (auto& a : args)
    if (auto it = kLong.find(a); kge && it != kLong.end()) a = it->second;
  return args;
}

void add_kge_command(CLI::App& app) {
  CLI::App* kge = app.add_subcommand("kge", "knowledge-graph embeddings (DGL-KE's commands)");
  kge->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  kge->require_subcommand(1);
  add_train(*kge);
  add_eval(*kge);
  add_partition(*kge);
}

}  // namespace tessera
