#include "kge_task.h"

#include <exception>
#include <thread>

#include <fmt/format.h>

#include "all_entities_step.h"
#include "io/json_file.h"
#include "io/staged_dir.h"
#include "kge_evaluation.h"
#include "tessera/base/error.h"
#include "tessera/base/threads.h"
#include "tessera/base/timer.h"
#include "tessera/io/npy.h"
#include "tessera/run/run_log.h"

namespace tessera::kge {
namespace {

torch::Tensor read_rows(const std::string& path) {
  return tensor_of(read_npy_checked(path, DType::kFloat32, 2, "embedding"));
}
torch::Tensor read_sums(const std::string& path) {
  return tensor_of(read_npy_checked(path, DType::kFloat32, 1, "optimizer state"));
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
  for (const nlohmann::json& trainer : run::gather_records(job.ctx->collectives(), mine))
    for (const nlohmann::json& worker : trainer) all.push_back(worker);
  return all;
}

}  // namespace

KgeTask::KgeTask(KgeJob& job, const KgeOptions& o, const ScoreFunction& score, const LossOptions& loss, int threads)
    : job_(job),
      o_(o),
      score_(score),
      threads_(threads),
      known_({&job.known_train, &job.kg.valid, &job.kg.test}),
      valid_(eval_subset(job.kg.valid, o.eval_percent, o.seed)),
      test_(eval_subset(job.kg.test, o.eval_percent, o.seed + 1)),
      since_log_(job.worker_triples.size()),
      total_(job.worker_triples.size()) {
  const Regularization reg{o.regularization_coef, o.regularization_norm, o.regularization_coef_rel,
                           o.regularization_weighted};
  if (scores_all_entities(o)) {
    // 1vsAll asks two queries per positive, KvsAll's batch is its queries.
    const int64_t queries = o.train_mode == "KvsAll" ? o.batch_size : 2 * o.batch_size;
    // Refused here, once the graph is read, if its scores cannot fit.
    const int64_t entities = job.kg.num_entities;
    int64_t rows = all_entities_chunk_rows(entities, score.entity_dim(), queries, o.all_scores_mb << 20);
    if (auto* on_servers = dynamic_cast<ServerTable*>(job.entities.get())) {
      // Each server keeps, per trainer, a batch's scores against its whole
      // shard (and a temporary as large), the shard's gradient and its
      // dropped copy.
      const int64_t shard = on_servers->candidates().largest_shard();
      const int64_t server_mb =
          (job.world_size() * (2 * queries + 2 * score.entity_dim()) * shard * static_cast<int64_t>(sizeof(float)) >>
           20) + 1;
      if (server_mb > o.all_scores_mb)
        fail("--train_mode {} with the entity table on the servers keeps, for each of the {} trainers, a batch's "
             "{} queries' scores against a server's {} entity rows and the shard's gradient: {} MB a server, more "
             "than --all_scores_mb {}; raise it, add machines, or lower --batch_size",
             o.train_mode, job.world_size(), queries, shard, server_mb, o.all_scores_mb);
      rows = queries;  // the trainer itself scores nothing
    }
    if (rows == 0)
      fail("--train_mode {} on {}: its {} entities need at least {} MB for the dense entity gradient and a chunk "
           "of scores, more than --all_scores_mb {}; raise it, or train with --train_mode negative_sampling, whose "
           "memory does not grow with the entities",
           o.train_mode, job.kg.name, entities,
           (all_entities_min_bytes(entities, score.entity_dim(), queries) >> 20) + 1, o.all_scores_mb);
    if (o.train_mode == "KvsAll") {
      kvsall_ = std::make_unique<KvsAllQueries>(kvsall_queries(job.kg.train, job.kg.num_relations, o.reciprocal));
      if (job.distributed()) {
        // job.kg.train holds every trainer's triples here (kge_job.cc): each
        // trainer asks every world_size-th query, and its sampler shuffles them.
        std::vector<int64_t> mine;
        for (int64_t q = job.rank(); q < kvsall_->size(); q += job.world_size()) mine.push_back(q);
        kvsall_->queries = kvsall_->queries.gather_rows(mine.data(), static_cast<int64_t>(mine.size()));
      }
    }
    steps_.emplace_back(std::make_unique<AllEntitiesStep>(
        score_options(o), reg, job.kg.num_relations, o.reciprocal, rows,
        EmbeddingDropout{o.entity_dropout, o.relation_dropout}, MultiLabel{kvsall_.get(), o.label_smoothing}));
    return;
  }
  for (size_t w = 0; w < job.worker_triples.size(); ++w) steps_.emplace_back(score_options(o), score, loss, reg);
}

std::string KgeTask::epoch_summary() const {
  if (!kvsall_) return "";
  return fmt::format("KvsAll: {} queries ({} for tails, {} for heads), {} steps an epoch{}", kvsall_->size(),
                     kvsall_->tail_queries, kvsall_->size() - kvsall_->tail_queries,
                     (kvsall_->queries.rows() + o_.batch_size - 1) / o_.batch_size,
                     job_.distributed() ? fmt::format(" (this trainer's share: {})", kvsall_->queries.rows()) : "");
}

void KgeTask::begin(int64_t steps_done) {
  step_ = steps_done;
  // Seeded by the step reached, so a resumed run draws new batches.
  const sampling::TripleSamplerOptions so = sampler_options(o_, job_.kg.num_entities);
  // KvsAll's sampler shuffles its queries, rows of the same shape (kvsall_queries.h).
  for (size_t w = 0; w < job_.worker_triples.size(); ++w)
    samplers_.push_back(std::make_unique<sampling::TripleSampler>(kvsall_ ? kvsall_->queries : job_.worker_triples[w],
                                                                  so, o_.seed + 7919 * steps_done, job_.rank() * 64 + w));
}

int64_t KgeTask::train(int64_t steps, const std::function<void()>&) {
  auto run_worker = [&](size_t w) {
    set_num_threads(threads_);
    sampling::TripleBatch batch;
    for (int64_t s = 0; s < steps && !failed_; ++s) {
      Timer t;
      samplers_[w]->next(&batch);
      since_log_[w].sample += t.seconds();
      with_context(
          [&] {
            return fmt::format("KGE step {} of worker {} ({}, {} triples, {} negatives per chunk)", step_ + s + 1, w,
                               o_.model_name, batch.size(), batch.negatives_per_chunk);
          },
          [&] { steps_[w].run(batch, *job_.entities, *job_.relations, &since_log_[w]); });
    }
  };
  if (samplers_.size() == 1) {
    run_worker(0);
  } else {
    // A worker's error ends the run from this thread (an exception may not
    // leave a std::thread); the others stop at their next step.
    std::vector<std::exception_ptr> errors(samplers_.size());
    std::vector<std::thread> workers;
    for (size_t w = 0; w < samplers_.size(); ++w)
      workers.emplace_back([&, w] {
        try {
          run_worker(w);
        } catch (...) {
          errors[w] = std::current_exception();
          failed_ = true;
        }
      });
    for (auto& t : workers) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  step_ += steps;
  return steps;
}

// Relations only: the entity push in flight stays in flight meanwhile.
void KgeTask::sync() {
  if (job_.distributed()) job_.sync_relations();
}

train::Report KgeTask::log_window(int64_t step, double seconds) {
  StepTimes sum;
  for (const StepTimes& s : since_log_) sum.add(s);
  const double n = std::max<int64_t>(1, sum.steps);
  seconds = std::max(seconds, 1e-9);
  train::Report r;
  // 1vsAll's and KvsAll's loss has no positive and negative parts: its cross-entropy is
  // kept where the positive part goes.
  const std::string parts = scores_all_entities(o_)
                                ? fmt::format("cross-entropy {:.4f}", sum.positive / n)
                                : fmt::format("pos {:.4f}  neg {:.4f}", sum.positive / n, sum.negative / n);
  r.line = fmt::format("[proc {}][Train]({}/{}) loss {:.4f}  {}  reg {:.6f}  | {:.0f} triples/s "
                       "{:.1f} steps/s  sample {:.1f}s pull {:.1f}s compute {:.1f}s push {:.1f}s",
                       job_.rank(), step, o_.max_step, sum.loss / n, parts, sum.regularization / n,
                       sum.triples / seconds, sum.steps / seconds, sum.sample, sum.pull, sum.compute, sum.push);
  r.record = {{"step", step}, {"loss", sum.loss / n}, {"pos_loss", sum.positive / n},
              {"neg_loss", sum.negative / n}, {"regularization", sum.regularization / n},
              {"triples_per_s", sum.triples / seconds}, {"steps_per_s", sum.steps / seconds},
              {"sample_s", sum.sample}, {"pull_s", sum.pull}, {"compute_s", sum.compute}, {"push_s", sum.push},
              {"per_trainer", worker_records(job_, since_log_, seconds)}};
  for (size_t w = 0; w < since_log_.size(); ++w) {
    total_[w].add(since_log_[w]);
    since_log_[w] = StepTimes{};
  }
  return r;
}

bool KgeTask::evaluates() const { return o_.valid && valid_.rows() > 0; }

train::Report KgeTask::evaluate(int64_t step) {
  Timer t;
  job_.entities->flush();  // the last steps' rows, also those a server applies itself
  last_valid_ = metrics_json(evaluate_triples(job_, valid_, score_, known_, o_), "valid");
  return {last_valid_, metrics_line(last_valid_, "valid") + fmt::format(" at step {} in {:.1f}s", step, t.seconds())};
}

nlohmann::json KgeTask::test_metrics() {
  job_.entities->flush();
  return metrics_json(evaluate_triples(job_, test_, score_, known_, o_), "test");
}

train::CheckpointState KgeTask::checkpoint_state(nlohmann::json config) {
  train::CheckpointState state;
  state.unit = "step";
  state.every_trainer = false;
  state.server_tensors = job_.entities->server_tensors();
  const bool entities_here = state.server_tensors.empty();
  state.before_save = [this] { job_.entities->flush(); };
  state.save = [this, config, entities_here](const std::string& dir) {
    write_npy(dir + "/relation.npy", array_of(job_.relations->read_all()));
    write_npy(dir + "/relation_state.npy", array_of(job_.relations->read_state().reshape({-1})));
    if (entities_here) {
      write_npy(dir + "/entity.npy", array_of(job_.entities->read_all()));
      write_npy(dir + "/entity_state.npy", array_of(job_.entities->read_state().reshape({-1})));
    }
    nlohmann::json progress = config;
    progress["step"] = step_;
    write_text_file(dir + "/progress.json", progress.dump(2) + "\n");
  };
  state.load = [this, config, entities_here](const std::string& dir) {
    const nlohmann::json progress = read_json_file(dir + "/progress.json", dir + " has no progress.json");
    for (const char* key : {"model", "emb_size", "n_entities", "n_relations", "double_ent", "double_rel"})
      if (progress.value(key, nlohmann::json()) != config.at(key))
        fail("--resume: the checkpoint in {} has {} = {}, this run {}", dir, key,
             progress.value(key, nlohmann::json()).dump(), config.at(key).dump());
    job_.relations->write_all(read_rows(dir + "/relation.npy"), read_sums(dir + "/relation_state.npy"));
    if (entities_here) job_.entities->write_all(read_rows(dir + "/entity.npy"), read_sums(dir + "/entity_state.npy"));
  };
  state.after_load = [this] { job_.broadcast_relations(); };  // only trainer 0 read the checkpoint
  return state;
}

nlohmann::json KgeTask::final_record(double train_s) {
  job_.entities->flush();
  job_.barrier();
  StepTimes all;
  for (const StepTimes& t : total_) all.add(t);
  const double world = job_.world_size(), seconds = std::max(1e-9, train_s);
  nlohmann::json final = {{"model", o_.model_name}, {"dataset", job_.kg.name}, {"steps", o_.max_step},
                          {"trainers", job_.world_size()}, {"workers", job_.worker_triples.size()},
                          {"train_s", train_s},
                          {"triples_per_s", static_cast<double>(all.triples) * world / seconds},
                          // Job-wide, as triples_per_s (trainer 0's steps times the trainers).
                          {"steps_per_s", static_cast<double>(all.steps) * world / seconds},
                          {"sample_s", all.sample}, {"pull_s", all.pull}, {"compute_s", all.compute},
                          {"push_s", all.push}, {"loss", all.steps ? all.loss / all.steps : 0.0}};
  if (!last_valid_.is_null())
    for (auto& [k, v] : last_valid_.items()) final[k] = v;
  auto* on_servers = dynamic_cast<ServerTable*>(job_.entities.get());
  if (on_servers != nullptr && scores_all_entities(o_)) {
    // What this trainer's steps sent and received, beside what pulling every
    // entity row and pushing its gradient back each step would have.
    const ShardedCandidates& c = on_servers->candidates();
    final["network_bytes_per_step"] = c.steps() ? static_cast<double>(c.bytes()) / static_cast<double>(c.steps()) : 0.0;
    final["all_rows_bytes_per_step"] =
        2.0 * static_cast<double>(on_servers->num_rows() * on_servers->dim()) * static_cast<double>(sizeof(float));
  }
  return final;
}

}  // namespace tessera::kge
