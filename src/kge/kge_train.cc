#include "tessera/kge/kge_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "all_entities_step.h"
#include "kge_evaluation.h"
#include "kge_files.h"
#include "kge_job.h"
#include "kge_task.h"
#include "tessera/run/run_log.h"
#include "tessera/base/error.h"
#include "tessera/base/threads.h"
#include "tessera/base/timer.h"

namespace tessera::kge {
namespace fs = std::filesystem;

void validate(const KgeOptions& o) {
  parse_model(o.model_name);
  if (o.hidden_dim < 1) fail("--hidden_dim must be at least 1, got {}", o.hidden_dim);
  if (!(o.gamma == o.gamma)) fail("--gamma must be a number");
  if (!(o.lr > 0)) fail("--lr must be positive, got {}", o.lr);
  if (o.max_step < 1) fail("--max_step must be at least 1, got {}", o.max_step);
  if (o.log_interval < 1) fail("--log_interval must be at least 1, got {}", o.log_interval);
  if (o.eval_interval < 1) fail("--eval_interval must be at least 1, got {}", o.eval_interval);
  if (o.num_proc < 1) fail("--num_proc must be at least 1, got {}", o.num_proc);
  if (o.num_thread < 0) fail("--num_thread must be at least 1 (0: cores / --num_proc), got {}", o.num_thread);
  if (o.num_test_proc < 0) fail("--num_test_proc must be at least 1 (0: --num_proc), got {}", o.num_test_proc);
  if (o.force_sync_interval < 0)
    fail("--force_sync_interval must be at least 1 (0: the training mode's default), got {}", o.force_sync_interval);
  if (o.checkpoint_interval < 0) fail("--checkpoint_interval must be 0 (none) or more, got {}", o.checkpoint_interval);
  if (o.keep_checkpoints < 1) fail("--keep_checkpoints must be at least 1, got {}", o.keep_checkpoints);
  if (!(o.eval_percent > 0 && o.eval_percent <= 1)) fail("--eval_percent must be in (0, 1], got {}", o.eval_percent);
  if (o.neg_sample_size_eval == 0 || o.neg_sample_size_eval < -1)
    fail("--neg_sample_size_eval must be -1 (every entity) or at least 1, got {}", o.neg_sample_size_eval);
  if (o.batch_size_eval < 1) fail("--batch_size_eval must be at least 1, got {}", o.batch_size_eval);
  if (o.neg_deg_sample_eval && !o.no_eval_filter)
    fail("--neg_deg_sample_eval needs --no_eval_filter (as in DGL-KE: candidates drawn by degree are not filtered)");
  if (o.neg_deg_sample_eval && o.neg_sample_size_eval < 0)
    fail("--neg_deg_sample_eval samples candidates: give --neg_sample_size_eval N (-1 ranks against every entity)");
  if (o.regularization_coef < 0) fail("-rc must not be negative, got {}", o.regularization_coef);
  if (!(o.regularization_norm > 0)) fail("-rn must be positive, got {}", o.regularization_norm);
  if (o.regularization_coef_rel < 0 && o.regularization_coef_rel != -1)
    fail("-rcr must not be negative (-1: the same as -rc), got {}", o.regularization_coef_rel);
  if (o.train_mode != "negative_sampling" && !scores_all_entities(o))
    fail("--train_mode must be negative_sampling (DGL-KE's), 1vsAll or KvsAll, got '{}'", o.train_mode);
  if (o.reciprocal && !scores_all_entities(o))
    fail("--reciprocal trains inverse relations with --train_mode 1vsAll or KvsAll; negative_sampling (DGL-KE's "
         "training) has no reciprocal form here");
  for (const auto& [flag, p] :
       {std::pair{"--entity_dropout", o.entity_dropout}, {"--relation_dropout", o.relation_dropout}}) {
    if (!(p >= 0 && p < 1)) fail("{} must be in [0, 1), got {}", flag, p);
    if (p > 0 && !scores_all_entities(o))
      fail("{} drops embedding elements in --train_mode 1vsAll's and KvsAll's step; negative_sampling (DGL-KE's "
           "training) has no dropout here",
           flag);
  }
  kge_optimizer(o.optimizer);  // fails naming the choices
  if (o.regularization_weighted && !scores_all_entities(o))
    fail("--regularization_weighted weighs the penalty in --train_mode 1vsAll's and KvsAll's step; negative_sampling "
         "(DGL-KE's training) takes each distinct row once");
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    fail("--label_smoothing must be in [0, 1), got {}", o.label_smoothing);
  if (o.label_smoothing > 0 && o.train_mode != "KvsAll")
    fail("--label_smoothing smooths --train_mode KvsAll's multi-label targets; {} has one answer per query (use "
         "--train_mode KvsAll)",
         o.train_mode);
  if (scores_all_entities(o)) {
    const std::string refusal = all_entities_refusal(score_options(o), o.num_proc, o.train_mode);
    if (!refusal.empty()) fail("{}", refusal);
    if (o.all_scores_mb < 1) fail("--all_scores_mb must be at least 1, got {}", o.all_scores_mb);
  }
  sampling::validate(sampler_options(o, 1));  // the entity count is checked when the graph is read
}

namespace {

LossOptions loss_options(const KgeOptions& o) {
  LossOptions l;
  l.genre = parse_loss_genre(o.loss_genre);
  l.margin = o.margin;
  l.adversarial = o.adversarial;
  l.temperature = o.adversarial_temperature;
  l.pairwise = o.pairwise;
  kge::validate(l);
  return l;
}

}  // namespace

int run_kge_training(const KgeOptions& options) {
  KgeOptions o = options;
  validate(o);
  o.model_name = model_name(parse_model(o.model_name));
  const int threads = threads_per_worker(o);
  set_num_threads(threads);
  keep_freed_memory();
  const auto score = make_score_function(score_options(o));
  const LossOptions loss = loss_options(o);
  KgeJob job = open_kge_job(o, *score);
  if (job.distributed() && o.num_proc != 1)
    fail("--num_proc {}: under tessera launch each trainer is one worker; ask the launcher for more trainers "
         "(--num_trainers)", o.num_proc);
  const nlohmann::json config = model_config(o, job.kg);
  if (job.logs()) fs::create_directories(o.save_path);
  const train::CheckpointOptions co{o.checkpoint_interval, o.checkpoint_dir, o.keep_checkpoints, o.resume};
  run::RunLog log(job.logs() ? (fs::path(o.save_path) / "metrics.jsonl").string() : "", job.logs(),
                  train::resuming(co));
  if (job.logs()) {
    nlohmann::json run = job.distributed() ? run::describe_job(*job.ctx)
                                           : nlohmann::json{{"graph_name", job.kg.name}, {"trainers", 1}, {"machines", 1}};
    run["tool"] = "kge train";
    run["config"] = config;
    run["out_dir"] = fs::absolute(o.save_path).lexically_normal().string();
    log.describe_run(run);
  }
  log.line(fmt::format("{}: {} entities, {} relations, {} training triples{}; {} (entity rows {}, relation rows {}), "
                       "{} worker(s) x {} thread(s)",
                       job.kg.name, job.kg.num_entities, job.kg.num_relations, job.known_train.rows(),
                       job.distributed() ? fmt::format(" over {} trainers", job.world_size()) : "", o.model_name,
                       score->entity_dim(), score->relation_dim(), job.worker_triples.size(), threads));

  KgeTask task(job, o, *score, loss, threads);
  if (!task.epoch_summary().empty()) log.line(task.epoch_summary());
  train::TrainingCheckpoints checkpoints(job.ctx.get(), co,
                                         o.checkpoint_dir.empty() ? o.save_path + "/checkpoint" : o.checkpoint_dir, log,
                                         task.checkpoint_state(config));
  train::TrainLoopOptions lo;
  lo.unit = train::TrainLoopOptions::Unit::kStep;
  lo.total = o.max_step;
  lo.total_flag = "--max_step";
  lo.log_every = o.log_interval;
  lo.eval_every = o.eval_interval;
  lo.sync_every = job.distributed() ? relation_sync_interval(o) : 0;
  lo.checkpoints = &checkpoints;
  train::TrainLoop loop(log, lo);
  loop.run(task);

  nlohmann::json final = task.final_record(loop.train_seconds());
  if (o.test && job.kg.test.rows() > 0) {
    Timer t;
    const nlohmann::json m = task.test_metrics();
    log.line(metrics_line(m, "test") + fmt::format(" in {:.1f}s", t.seconds()));
    for (auto& [k, v] : m.items()) final[k] = v;
    final["test_s"] = t.seconds();
  }
  if (!o.no_save_emb && job.logs()) {
    save_embeddings(o, job.kg, job.entities->read_all(), job.relations->view());
    log.line(fmt::format("saved {}_{}_entity.npy and _relation.npy in {}", job.kg.name, o.model_name, o.save_path));
  }
  loop.finish(final);
  job.barrier();
  return 0;
}

namespace {

// dglke_eval's command line repeats the model flags; config.json is the truth. A flag left at its default counts
// as not given.
void check_model_flags(const KgeOptions& given, const KgeOptions& saved) {
  const KgeOptions defaults;
  const std::string path = saved.save_path + "/config.json";
  if (given.model_name != defaults.model_name &&
      model_name(parse_model(given.model_name)) != model_name(parse_model(saved.model_name)))
    fail("--model_name {}: {} says the embeddings are {}", given.model_name, path, saved.model_name);
  if (given.hidden_dim != defaults.hidden_dim && given.hidden_dim != saved.hidden_dim)
    fail("--hidden_dim {}: {} says {}", given.hidden_dim, path, saved.hidden_dim);
  if (given.gamma != defaults.gamma && given.gamma != saved.gamma)
    fail("--gamma {}: {} says {}", given.gamma, path, saved.gamma);
  if ((given.double_ent && !saved.double_ent) || (given.double_rel && !saved.double_rel))
    fail("-de / -dr: {} says double_ent {}, double_rel {}", path, saved.double_ent, saved.double_rel);
}

}  // namespace

int run_kge_evaluation(const KgeOptions& options) {
  KgeOptions o = options_from_config(options.save_path, options);
  check_model_flags(options, o);
  validate(o);
  o.model_name = model_name(parse_model(o.model_name));
  set_num_threads((o.num_test_proc > 0 ? o.num_test_proc : o.num_proc) * threads_per_worker(o));
  keep_freed_memory();
  const auto score = make_score_function(score_options(o));
  const KnowledgeGraph kg = read_knowledge_graph({o.data_path, o.dataset, o.format, o.data_files, o.delimiter});
  const SavedTables tables = load_embeddings(o, score->entity_dim(), score->relation_dim());
  if (tables.entities.size(0) != kg.num_entities || tables.relations.size(0) != kg.num_relations * (o.reciprocal ? 2 : 1))
    fail("{}: {} entity and {} relation rows, but {} has {} entities and {} relations", o.save_path,
         tables.entities.size(0), tables.relations.size(0), kg.name, kg.num_entities, kg.num_relations);
  const KnownTriples known({&kg.train, &kg.valid, &kg.test});
  run::RunLog log("", true);
  Timer t;
  const Array test = eval_subset(kg.test, o.eval_percent, o.seed + 1);
  RankOptions ro{!o.no_eval_filter, o.neg_sample_size_eval, o.batch_size_eval,
                 o.neg_deg_sample_eval ? &kg.train : nullptr, o.seed, true, o.reciprocal ? kg.num_relations : 0};
  nlohmann::json m = metrics_json(rank_triples(test, 0, test.rows(), tables.entities, tables.relations, *score, &known, ro), "test");
  log.line(metrics_line(m, "test") + fmt::format(" in {:.1f}s", t.seconds()));
  m["model"] = o.model_name;
  m["dataset"] = kg.name;
  m["test_s"] = t.seconds();
  log.final_metrics(m);
  return 0;
}

}  // namespace tessera::kge
