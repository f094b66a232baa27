#include "tessera/kge/kge_train.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "kge_checkpoint.h"
#include "kge_files.h"
#include "kge_job.h"
#include "kge_step.h"
#include "ranker.h"
#include "tessera/distributed/job_env.h"
#include "tessera/train/run_log.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
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
  if (o.force_sync_interval < 1) fail("--force_sync_interval must be at least 1, got {}", o.force_sync_interval);
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
  SamplerOptions s{o.batch_size, o.neg_sample_size, o.neg_chunk_size, o.neg_deg_sample, 1};
  kge::validate(s);
}

namespace {

ScoreOptions score_options(const KgeOptions& o) {
  return {parse_model(o.model_name), o.hidden_dim, o.gamma, o.double_ent, o.double_rel};
}

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

int threads_per_worker(const KgeOptions& o) {
  if (o.num_thread > 0) return o.num_thread;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / o.num_proc);
}

// The first --eval_percent of a seeded shuffle of `triples`, as DGL-KE samples.
Array eval_subset(const Array& triples, double percent, uint64_t seed) {
  if (percent >= 1) return triples;
  const int64_t n = triples.rows();
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  Rng rng(seed, 91);
  for (int64_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  order.resize(std::max<int64_t>(1, static_cast<int64_t>(n * percent)));
  return triples.gather_rows(order.data(), static_cast<int64_t>(order.size()));
}

nlohmann::json metrics_json(const RankSums& s, const std::string& prefix) {
  const double n = std::max(1.0, s.count);
  return {{prefix + "_mrr", s.reciprocal / n}, {prefix + "_mr", s.rank / n},     {prefix + "_hits@1", s.hits1 / n},
          {prefix + "_hits@3", s.hits3 / n},   {prefix + "_hits@10", s.hits10 / n}, {prefix + "_queries", s.count}};
}

// Ranks this trainer's share of `triples`; the sums of every trainer. The
// workers are idle meanwhile: ranking gets the threads of --num_test_proc of
// them (DGL-KE's test processes), all of them by default.
RankSums evaluate(KgeJob& job, const Array& triples, const ScoreFunction& score, const KnownTriples& known,
                  const KgeOptions& o) {
  const int worker_threads = threads_per_worker(o);
  set_num_threads((o.num_test_proc > 0 ? o.num_test_proc : o.num_proc) * worker_threads);
  struct Restore {
    int n;
    ~Restore() { set_num_threads(n); }
  } restore{worker_threads};
  job.entities->flush();
  job.barrier();  // every trainer's last pushes have landed
  const torch::Tensor entities = job.entities->read_all();
  const torch::Tensor relations = job.relations->view();
  const int64_t n = triples.rows();
  const int64_t begin = n * job.rank() / job.world_size(), end = n * (job.rank() + 1) / job.world_size();
  RankOptions ro{!o.no_eval_filter, o.neg_sample_size_eval, o.batch_size_eval,
                 o.neg_deg_sample_eval ? &job.known_train : nullptr, o.seed, job.logs()};
  RankSums mine = rank_triples(triples, begin, end, entities, relations, score, &known, ro);
  if (!job.distributed()) return mine;
  auto a = mine.as_array();
  job.ctx->collectives().all_reduce_sum(a.data(), static_cast<int64_t>(a.size()));
  return RankSums::from_array(a);
}

std::string metrics_line(const nlohmann::json& m, const std::string& prefix) {
  return fmt::format("[{}] MRR {:.4f}  MR {:.1f}  Hits@1 {:.4f}  Hits@3 {:.4f}  Hits@10 {:.4f}  ({} queries)", prefix,
                     m[prefix + "_mrr"].get<double>(), m[prefix + "_mr"].get<double>(),
                     m[prefix + "_hits@1"].get<double>(), m[prefix + "_hits@3"].get<double>(),
                     m[prefix + "_hits@10"].get<double>(), m[prefix + "_queries"].get<double>());
}

// The next step at which the main thread has work: a log line, an
// evaluation, a checkpoint or a relation sync.
int64_t next_stop(int64_t step, const KgeOptions& o, bool distributed) {
  auto next = [step](int64_t every) { return (step / every + 1) * every; };
  int64_t stop = std::min(o.max_step, next(o.log_interval));
  if (o.valid) stop = std::min(stop, next(o.eval_interval));
  if (o.checkpoint_interval > 0) stop = std::min(stop, next(o.checkpoint_interval));
  if (distributed) stop = std::min(stop, next(o.force_sync_interval));
  return stop;
}

// Every worker's own rates and time split since the last log line, over all
// trainers (collective when distributed): what `tessera report` draws per trainer.
nlohmann::json worker_records(KgeJob& job, const std::vector<StepTimes>& since_log, double seconds) {
  nlohmann::json mine = nlohmann::json::array();
  for (size_t w = 0; w < since_log.size(); ++w) {
    const StepTimes& t = since_log[w];
    // "process" names the process as the launcher does, so that the report
    // draws one memory bar per process, not one per worker.
    mine.push_back({{"rank", job.rank()}, {"worker", w},
                    {"process", job.distributed() ? job.ctx->env().label() : std::string("standalone")},
                    {"steps_per_s", t.steps / seconds}, {"triples_per_s", t.triples / seconds},
                    {"sample_s", t.sample}, {"pull_s", t.pull}, {"compute_s", t.compute}, {"push_s", t.push},
                    {"peak_rss_mb", peak_rss_bytes() / 1e6}});
  }
  if (!job.distributed()) return mine;
  nlohmann::json all = nlohmann::json::array();
  for (const nlohmann::json& trainer : train::gather_records(job.ctx->collectives(), mine))
    for (const nlohmann::json& worker : trainer) all.push_back(worker);
  return all;
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
  train::RunLog log(job.logs() ? (fs::path(o.save_path) / "metrics.jsonl").string() : "", job.logs(),
                    o.resume || distributed::launcher_restart() > 0);
  if (job.logs()) {
    nlohmann::json run = job.distributed() ? train::describe_job(*job.ctx)
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

  KgeCheckpoints checkpoints(job, o.checkpoint_dir.empty() ? o.save_path + "/checkpoint" : o.checkpoint_dir,
                             o.keep_checkpoints, config);
  int64_t step = 0;
  if (o.resume || distributed::launcher_restart() > 0) {
    // Restarted by the launcher: a job that failed before its first
    // checkpoint starts over.
    step = checkpoints.newest(o.resume);
    if (step > 0) {
      checkpoints.load(step);
      log.line(fmt::format("resumed from {} at step {}", checkpoints.dir(), step));
    } else {
      log.line(fmt::format("restarted by the launcher; no checkpoint in {} yet: starting over", checkpoints.dir()));
    }
  }

  SamplerOptions so{o.batch_size, o.neg_sample_size, o.neg_chunk_size, o.neg_deg_sample, job.kg.num_entities};
  std::vector<std::unique_ptr<TripleSampler>> samplers;
  for (size_t w = 0; w < job.worker_triples.size(); ++w)
    samplers.push_back(std::make_unique<TripleSampler>(job.worker_triples[w], so, o.seed + 7919 * step,
                                                       job.rank() * 64 + w));
  std::vector<KgeStep> worker_steps;  // one per worker: a fused step keeps its buffers
  for (size_t w = 0; w < samplers.size(); ++w)
    worker_steps.emplace_back(score_options(o), *score, loss, Regularization{o.regularization_coef, o.regularization_norm});
  const KnownTriples known({&job.known_train, &job.kg.valid, &job.kg.test});
  const Array valid = eval_subset(job.kg.valid, o.eval_percent, o.seed);
  const Array test = eval_subset(job.kg.test, o.eval_percent, o.seed + 1);

  std::vector<StepTimes> since_log(samplers.size()), total(samplers.size());
  Timer train_timer, log_timer;
  double eval_s = 0;
  nlohmann::json last_valid;
  std::atomic<bool> failed{false};
  auto run_worker = [&](size_t w, int64_t steps) {
    set_num_threads(threads);
    TripleBatch batch;
    for (int64_t s = 0; s < steps && !failed; ++s) {
      Timer t;
      samplers[w]->next(&batch);
      since_log[w].sample += t.seconds();
      with_context(
          [&] {
            return fmt::format("KGE step {} of worker {} ({}, {} triples, {} negatives per chunk)", step + s + 1, w,
                               o.model_name, batch.size(), batch.negatives_per_chunk);
          },
          [&] { worker_steps[w].run(batch, *job.entities, *job.relations, &since_log[w]); });
    }
  };
  log.progress("training", step, o.max_step);
  while (step < o.max_step) {
    const int64_t stop = next_stop(step, o, job.distributed());
    if (samplers.size() == 1) {
      run_worker(0, stop - step);
    } else {
      // A worker's error ends the run from this thread (an exception may not
      // leave a std::thread); the others stop at their next step.
      std::vector<std::exception_ptr> errors(samplers.size());
      std::vector<std::thread> workers;
      for (size_t w = 0; w < samplers.size(); ++w)
        workers.emplace_back([&, w] {
          try {
            run_worker(w, stop - step);
          } catch (...) {
            errors[w] = std::current_exception();
            failed = true;
          }
        });
      for (auto& t : workers) t.join();
      for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    }
    step = stop;
    log.progress("training", step, o.max_step);
    // Relations only: the entity push in flight stays in flight meanwhile.
    if (job.distributed() && (step % o.force_sync_interval == 0 || step == o.max_step)) job.sync_relations();
    if (step % o.log_interval == 0 || step == o.max_step) {
      StepTimes sum;
      for (auto& s : since_log) sum.add(s);
      const double n = std::max<int64_t>(1, sum.steps);
      const double seconds = log_timer.lap();
      log.line(fmt::format("[proc {}][Train]({}/{}) loss {:.4f}  pos {:.4f}  neg {:.4f}  reg {:.6f}  | {:.0f} triples/s "
                           "{:.1f} steps/s  sample {:.1f}s pull {:.1f}s compute {:.1f}s push {:.1f}s",
                           job.rank(), step, o.max_step, sum.loss / n, sum.positive / n, sum.negative / n,
                           sum.regularization / n, sum.triples / seconds, sum.steps / seconds, sum.sample, sum.pull,
                           sum.compute, sum.push));
      log.metrics({{"step", step}, {"loss", sum.loss / n}, {"pos_loss", sum.positive / n},
                   {"neg_loss", sum.negative / n}, {"regularization", sum.regularization / n},
                   {"triples_per_s", sum.triples / seconds}, {"steps_per_s", sum.steps / seconds},
                   {"sample_s", sum.sample}, {"pull_s", sum.pull}, {"compute_s", sum.compute}, {"push_s", sum.push},
                   {"per_trainer", worker_records(job, since_log, seconds)}});
      for (size_t w = 0; w < since_log.size(); ++w) {
        total[w].add(since_log[w]);
        since_log[w] = StepTimes{};
      }
    }
    if (o.valid && (step % o.eval_interval == 0 || step == o.max_step) && valid.rows() > 0) {
      log.clear_progress();  // ranking draws its own bar
      Timer t;
      last_valid = metrics_json(evaluate(job, valid, *score, known, o), "valid");
      eval_s += t.seconds();
      log.line(metrics_line(last_valid, "valid") + fmt::format(" at step {} in {:.1f}s", step, t.seconds()));
      last_valid["step"] = step;
      log.metrics(last_valid);
      log_timer.reset();
    }
    if (o.checkpoint_interval > 0 && step % o.checkpoint_interval == 0 && step < o.max_step) {
      job.entities->flush();
      checkpoints.save(step);
      log_timer.reset();
    }
  }
  job.entities->flush();
  job.barrier();
  const double train_s = train_timer.seconds() - eval_s;
  StepTimes all;
  for (auto& t : total) all.add(t);

  nlohmann::json final = {{"model", o.model_name}, {"dataset", job.kg.name}, {"steps", o.max_step},
                          {"trainers", job.world_size()}, {"workers", job.worker_triples.size()},
                          {"train_s", train_s},
                          {"triples_per_s", static_cast<double>(all.triples) * job.world_size() / std::max(1e-9, train_s)},
                          // Job-wide, as triples_per_s (trainer 0's steps times the trainers).
                          {"steps_per_s", static_cast<double>(all.steps) * job.world_size() / std::max(1e-9, train_s)},
                          {"sample_s", all.sample}, {"pull_s", all.pull}, {"compute_s", all.compute},
                          {"push_s", all.push}, {"loss", all.steps ? all.loss / all.steps : 0.0}};
  if (!last_valid.is_null())
    for (auto& [k, v] : last_valid.items())
      if (k != "step") final[k] = v;
  if (o.test && test.rows() > 0) {
    Timer t;
    const nlohmann::json m = metrics_json(evaluate(job, test, *score, known, o), "test");
    log.line(metrics_line(m, "test") + fmt::format(" in {:.1f}s", t.seconds()));
    for (auto& [k, v] : m.items()) final[k] = v;
    final["test_s"] = t.seconds();
  }
  if (!o.no_save_emb && job.logs()) {
    save_embeddings(o, job.kg, job.entities->read_all(), job.relations->view());
    log.line(fmt::format("saved {}_{}_entity.npy and _relation.npy in {}", job.kg.name, o.model_name, o.save_path));
  }
  final["peak_rss_mb"] = peak_rss_bytes() / 1e6;
  log.final_metrics(final);
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
  if (tables.entities.size(0) != kg.num_entities || tables.relations.size(0) != kg.num_relations)
    fail("{}: {} entity and {} relation rows, but {} has {} entities and {} relations", o.save_path,
         tables.entities.size(0), tables.relations.size(0), kg.name, kg.num_entities, kg.num_relations);
  const KnownTriples known({&kg.train, &kg.valid, &kg.test});
  train::RunLog log("", true);
  Timer t;
  const Array test = eval_subset(kg.test, o.eval_percent, o.seed + 1);
  RankOptions ro{!o.no_eval_filter, o.neg_sample_size_eval, o.batch_size_eval,
                 o.neg_deg_sample_eval ? &kg.train : nullptr, o.seed, true};
  nlohmann::json m = metrics_json(rank_triples(test, 0, test.rows(), tables.entities, tables.relations, *score, &known, ro), "test");
  log.line(metrics_line(m, "test") + fmt::format(" in {:.1f}s", t.seconds()));
  m["model"] = o.model_name;
  m["dataset"] = kg.name;
  m["test_s"] = t.seconds();
  log.final_metrics(m);
  return 0;
}

}  // namespace tessera::kge
