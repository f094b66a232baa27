// `tessera kge train | eval | partition | predict | emb_sim`: DGL-KE's
// dglke_train / dglke_dist_train, dglke_eval, dglke_partition, dglke_predict
// and dglke_emb_sim, with their flags.
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "tessera/kge/kge_infer.h"
#include "tessera/kge/kge_train.h"
#include "tessera/kge/knowledge_graph.h"
#include "tessera/partition/partition.h"
#include "tools/commands.h"
#include "tools/kge_flags.h"
#include "tessera/base/timer.h"

namespace tessera {
namespace {

using kge::KgeOptions;

// Where flags accepted for DGL-KE's command lines but without effect here
// write: storage that outlives every parser (CLI11 keeps a reference).
std::string& discarded_value() {
  static std::string value;
  return value;
}
bool& discarded_flag() {
  static bool flag = false;
  return flag;
}

// DGL-KE's data flags, shared by train, eval and partition.
void add_source_flags(CLI::App* cmd, std::string* data_path, std::string* dataset, std::string* format,
                      std::vector<std::string>* data_files, std::string* delimiter) {
  cmd->add_option("--data_path,--data-path", *data_path, "folder holding the dataset (or its parent)");
  cmd->add_option("--dataset", *dataset, "dataset name: <data_path>/<dataset> is read when it exists");
  cmd->add_option("--format", *format,
                  "built_in | raw_udd_<order> | udd_<order> (order: hrt, htr, ...) | openke | auto (default)");
  cmd->add_option("--data_files", *data_files,
                  "raw_udd: train [valid test]; udd: entities relations train [valid test] (in the data folder)")
      ->expected(1, 5)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--delimiter", *delimiter, "field separator of raw_udd / udd files (default tab)");
  cmd->add_flag_callback(
      "--has_edge_importance",
      [] {
        throw CLI::ValidationError("--has_edge_importance",
                                   "weighting the loss by a fourth column of edge importance is not supported yet");
      },
      "refused: Tessera does not weight the loss by edge importance yet");
}

// DGL-KE's --gpu: only -1 (the CPU) runs here.
void add_gpu_flag(CLI::App* cmd) {
  cmd->add_option_function<std::vector<int>>(
         "--gpu",
         [](const std::vector<int>& gpus) {
           for (int g : gpus)
             if (g != -1)
               throw CLI::ValidationError("--gpu", fmt::format("GPU {} asked for: Tessera's KGE runs on the CPU "
                                                                "(give -1 or leave --gpu out)", g));
         },
         "-1 (the CPU, default); GPUs are refused")
      ->expected(1, 64)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_data_flags(CLI::App* cmd, KgeOptions* o) {
  add_source_flags(cmd, &o->data_path, &o->dataset, &o->format, &o->data_files, &o->delimiter);
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
  cmd->add_flag("--neg_deg_sample_eval", o->neg_deg_sample_eval,
                "as many sampled candidates again, in proportion to degree (with --no_eval_filter)");
  cmd->add_option("--num_thread", o->num_thread, "threads per worker (default 0: cores / --num_proc)");
  cmd->add_option("--num_test_proc", o->num_test_proc,
                  "evaluation ranks on this many workers' threads (default 0: --num_proc, every worker's)");
  cmd->add_option("--seed", o->seed, "random seed (default 0)");
}

// Training flags beyond DGL-KE's; its command lines keep their meaning without them.
void add_beyond_dglke_flags(CLI::App* cmd, KgeOptions* o) {
  cmd->add_option("--train_mode", o->train_mode,
                  "negative_sampling (DGL-KE's, default), 1vsAll or KvsAll (every entity a candidate)");
  cmd->add_flag("--reciprocal", o->reciprocal, "1vsAll/KvsAll: an inverse relation per relation predicts heads as tails");
  cmd->add_option("--optimizer", o->optimizer,
                  "row_adagrad (DGL-KE's, default), adagrad (element-wise, LibKGE's) or adam (torch's, a step count per row)");
  cmd->add_option("--label_smoothing", o->label_smoothing, "KvsAll: label smoothing of the targets (default 0)");
  cmd->add_option("--entity_dropout", o->entity_dropout, "1vsAll/KvsAll: dropout on entity embeddings (default 0)");
  cmd->add_option("--relation_dropout", o->relation_dropout, "1vsAll/KvsAll: dropout on relation embeddings (default 0)");
  cmd->add_option("--all_scores_mb", o->all_scores_mb,
                  "1vsAll/KvsAll: memory for scores and dense gradient (default 2048)");
  cmd->add_option("--regularization_coef_rel", o->regularization_coef_rel, "the relations' -rc (default -1: -rc's)");
  cmd->add_flag("--regularization_weighted", o->regularization_weighted,
                "1vsAll/KvsAll: each row's -rc penalty by its share of the batch's uses (LibKGE's weighted Lp)");
}

}  // namespace

void add_training_flags(CLI::App* cmd, KgeOptions* o) {
  add_data_flags(cmd, o);
  add_model_flags(cmd, o);
  add_eval_flags(cmd, o);
  cmd->add_option("--part_config,--part-config", o->part_config,
                  "partitioned KG (`tessera kge partition`): train under tessera launch, entities on the servers");
  cmd->add_option("--ip_config,--ip-config", discarded_value(), "set by tessera launch (informational)");
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
  add_beyond_dglke_flags(cmd, o);
  cmd->add_option("--max_step", o->max_step, "steps per worker (default 80000)");
  cmd->add_option("--log_interval", o->log_interval, "steps between progress lines (default 1000)");
  cmd->add_option("--eval_interval", o->eval_interval, "steps between validations with --valid (default 10000)");
  cmd->add_flag("--valid", o->valid, "rank the validation triples every --eval_interval steps");
  cmd->add_flag("--test", o->test, "rank the test triples after training");
  cmd->add_option("--num_proc", o->num_proc, "worker threads sharing the tables, Hogwild (default 1)");
  cmd->add_flag("--async_update", o->async_update,
                "accepted for DGL-KE's command line: distributed pushes always overlap the next step");
  cmd->add_option("--force_sync_interval", o->force_sync_interval,
                  "distributed: steps between merges of the relation replicas (default 10; 1vsAll/KvsAll: 1)");
  cmd->add_option("--save_path", o->save_path,
                  "where embeddings, config.json, metrics.jsonl go (default: the launcher's --run-dir, else ckpts)");
  cmd->add_flag("--no_save_emb", o->no_save_emb, "do not save the embeddings");
  cmd->add_option("--checkpoint_interval", o->checkpoint_interval,
                  "steps between checkpoints of the embeddings and their optimizer state (default 10000; 0: none)");
  cmd->add_option("--checkpoint_dir", o->checkpoint_dir,
                  "where trainer 0 and every server keep their checkpoints (default <save_path>/checkpoint)");
  cmd->add_option("--keep_checkpoints", o->keep_checkpoints, "checkpoints kept (default 2)");
  cmd->add_flag("--resume", o->resume,
                "continue from the newest complete checkpoint (automatic after a restart by tessera launch)");
  cmd->add_option("--num_client_proc,--num_client", discarded_value(),
                  "accepted for dglke_dist_train (the launcher's --num_trainers)");
  cmd->add_flag("--rel_part,--soft_rel_part,--mix_cpu_gpu", discarded_flag(), "accepted for DGL-KE's command line");
  add_gpu_flag(cmd);
}

namespace {

void add_train(CLI::App& kge) {
  auto o = std::make_shared<KgeOptions>();
  CLI::App* cmd = kge.add_subcommand("train", "train knowledge-graph embeddings (dglke_train / dglke_dist_train)");
  add_training_flags(cmd, o.get());
  cmd->callback([o, cmd] {
    const char* run_dir = std::getenv("TESSERA_RUN_DIR");
    if (cmd->count("--save_path") == 0 && run_dir != nullptr && *run_dir != '\0') o->save_path = run_dir;
    const int code = kge::run_kge_training(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

void add_eval(CLI::App& kge) {
  auto o = std::make_shared<KgeOptions>();
  CLI::App* cmd = kge.add_subcommand("eval", "rank the test triples with saved embeddings (dglke_eval)");
  add_data_flags(cmd, o.get());
  add_eval_flags(cmd, o.get());
  // dglke_eval takes the model's flags again; config.json has them, and one that contradicts it is refused.
  add_model_flags(cmd, o.get());
  cmd->add_option("--num_proc", o->num_proc, "workers whose threads rank (default 1: every core)");
  cmd->add_flag("--mix_cpu_gpu", discarded_flag(), "accepted for DGL-KE's command line");
  cmd->add_option("--model_path,--save_path", o->save_path, "the --save_path of training (config.json, *.npy)")
      ->required();
  add_gpu_flag(cmd);
  cmd->callback([o] {
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
  add_source_flags(cmd, &source->data_path, &source->dataset, &source->format, &source->data_files,
                   &source->delimiter);
  cmd->get_option("--data_path")->required();
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

// Flags predict and emb_sim share: the object lists, how many rows to keep, where they go.
template <class Options>
void add_inference_flags(CLI::App* cmd, Options* o, int max_files, const char* raw_help, const char* topk_help) {
  cmd->add_option("--data_files", o->data_files, "one list file per letter of --format, one object a line")
      ->expected(0, max_files)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--raw_data", o->raw_data, raw_help);
  cmd->add_option("--topK,--topk", o->topk, topk_help);
  cmd->add_option("--output", o->output, "result file (default result.tsv)");
  cmd->add_option("--num_thread", o->num_thread, "threads (default 0: TESSERA_NUM_THREADS, else OMP_NUM_THREADS, else 2)");
  add_gpu_flag(cmd);
}

void add_predict(CLI::App& kge) {
  auto o = std::make_shared<kge::PredictOptions>();
  CLI::App* cmd = kge.add_subcommand("predict", "top-K triples among given heads, relations, tails (dglke_predict)");
  cmd->add_option("--data_path", o->data_path, "where --entity_mfile / --rel_mfile are looked up (default data)");
  cmd->add_option("--model_path", o->model_path, "the --save_path of training (config.json, *.npy)")->required();
  cmd->add_option("--format", o->format, "h_r_t, h_r_*, h_*_t, *_r_t, h_*_*, *_r_* or *_*_t ('*': all)")->required();
  add_inference_flags(cmd, o.get(), 3, "the lists hold names, mapped through the ID maps",
                      "rows kept (per element with batch_*; default 10)");
  cmd->add_option("--exec_mode", o->exec_mode, "all (default), triplet_wise, batch_head, batch_rel or batch_tail");
  cmd->add_option("--score_func", o->score_func, "none (default) or logsigmoid");
  cmd->add_option("--entity_mfile", o->entity_mfile, "entity ID map (default <model_path>/entities.tsv)");
  cmd->add_option("--rel_mfile", o->rel_mfile, "relation ID map (default <model_path>/relations.tsv)");
  cmd->callback([o] {
    const int code = kge::run_kge_predict(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

void add_emb_sim(CLI::App& kge) {
  auto o = std::make_shared<kge::EmbSimOptions>();
  CLI::App* cmd = kge.add_subcommand("emb_sim", "most similar pairs of embeddings (dglke_emb_sim)");
  cmd->add_option("--emb_file", o->emb_file, "an entity or relation table saved by training (.npy)")->required();
  cmd->add_option("--format", o->format, "l_r, l_*, *_r or * ('*': every row)")->required();
  add_inference_flags(cmd, o.get(), 2, "the lists hold names, mapped through --mfile",
                      "rows kept (per left object with batch_left; default 10)");
  cmd->add_option("--mfile", o->mfile, "the ID map of the table's rows (entities.tsv / relations.tsv)");
  cmd->add_option("--exec_mode", o->exec_mode, "all (default), pairwise or batch_left");
  cmd->add_option("--sim_func", o->sim_func, "cosine (default), l2, l1, dot or ext_jaccard");
  cmd->callback([o] {
    const int code = kge::run_kge_emb_sim(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace

std::vector<std::string> dglke_spellings(int argc, char** argv) {
  // CLI11 reads "-adv" as -a -d -v; DGL-KE's multi-letter single-dash flags
  // (-adv, -de, -dr, -rc, -rn, -pw, -log) become their long names, as does
  // Tessera's -rcr.
  static const std::map<std::string, std::string> kLong = {
      {"-adv", "--neg_adversarial_sampling"}, {"-de", "--double_ent"},          {"-dr", "--double_rel"},
      {"-rc", "--regularization_coef"},       {"-rn", "--regularization_norm"}, {"-pw", "--pairwise"},
      {"-log", "--log_interval"},             {"-rcr", "--regularization_coef_rel"}};
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
  add_kge_dist_train(*kge);
  add_eval(*kge);
  add_partition(*kge);
  add_predict(*kge);
  add_emb_sim(*kge);
}

}  // namespace tessera
