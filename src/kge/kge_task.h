// KGE training as a task on the one TrainLoop (tessera/train/train_loop.h),
// by steps: --num_proc workers, each with its own triple sampler and step,
// run Hogwild-style on the shared tables between the loop's stops; the
// relation replicas of a distributed run merge at each sync; a log window
// reports the loss and every worker's time split; evaluation ranks the
// validation triples; checkpoints keep the relations and, where they live,
// the entity rows with their optimizer state.
//
// Private header: it includes libtorch through the job.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kge_job.h"
#include "kge_step.h"
#include "kvsall_queries.h"
#include "ranker.h"
#include "tessera/train/checkpoint.h"
#include "tessera/train/train_loop.h"

namespace tessera::kge {

class KgeTask final : public train::TrainTask {
 public:
  // `job`, `options` (validated) and `score` must outlive the task;
  // `threads`: each worker's.
  KgeTask(KgeJob& job, const KgeOptions& options, const ScoreFunction& score, const LossOptions& loss, int threads);

  void begin(int64_t steps_done) override;
  int64_t train(int64_t steps, const std::function<void()>& stepped) override;
  void sync() override;
  train::Report log_window(int64_t step, double seconds) override;
  // KvsAll: its queries and steps an epoch, for the log ("" otherwise).
  std::string epoch_summary() const;
  bool evaluates() const override;
  train::Report evaluate(int64_t step) override;

  // What a checkpoint holds: trainer 0's relations (the others are its
  // replicas) and the entity rows where they live. `config` (model_config())
  // is written with each one and must match on resume.
  train::CheckpointState checkpoint_state(nlohmann::json config);
  // After training: every push landed; the final record's training fields.
  nlohmann::json final_record(double train_s);
  // The test metrics of every trainer's share (collective).
  nlohmann::json test_metrics();

 private:
  KgeJob& job_;
  const KgeOptions& o_;
  const ScoreFunction& score_;
  int threads_;
  std::vector<std::unique_ptr<sampling::TripleSampler>> samplers_;
  std::vector<KgeStep> steps_;  // one per worker: a fused step keeps its buffers
  std::unique_ptr<KvsAllQueries> kvsall_;  // KvsAll's training queries (null otherwise)
  KnownTriples known_;
  Array valid_, test_;
  std::vector<StepTimes> since_log_, total_;
  int64_t step_ = 0;
  nlohmann::json last_valid_;
  std::atomic<bool> failed_{false};
};

}  // namespace tessera::kge
