// The training loop every node-classification program shares, built-in or
// written by a user (Marius's Trainer): a supervised step with the gradient
// all-reduce, the epoch driver that runs a step function over a
// DistDataLoader and logs, times and evaluates, and the small pieces around
// them (fanout flags, class counts, equal step counts, batch tensors).
//
// Contract: every function that talks to other trainers (supervised_step,
// EpochLoop::run, accuracy, count_classes, broadcast_parameters,
// common_steps) is collective: every trainer calls it in the same order.
// Tensors returned by features_of / labels_of / rows_of / blocks_of are views of the
// batch's memory: the batch must outlive them and stay unchanged. One loop
// per thread; errors are tessera::Error (bad flags, a trainer without
// batches) or what the step function throws, passed through unchanged.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_tensor.h"
#include "tessera/nn/sage.h"
#include "tessera/nn/sage_step.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/node_train_options.h"
#include "tessera/run/run_log.h"
#include "tessera/train/train_loop.h"

namespace tessera::train {

// What one optimizer step of node classification gives back.
struct StepResult {
  double loss = 0;
  int64_t correct = 0;                  // seeds whose prediction is right
  double compute_s = 0, allreduce_s = 0;
  double allreduce_cpu_s = 0;           // the calling thread's CPU time in the all-reduce
  double sparse_s = 0;                  // the push of embedding gradients, if the step has one
};

// Backward of `loss`, the gradient all-reduce over the trainers and the
// optimizer's step: the end of every task's step. Adds the backward and step
// time to r->compute_s and the all-reduce's to r->allreduce_s.
void apply_gradients(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                     const torch::Tensor& loss, StepResult* r);

// Cross-entropy of forward()'s logits against `labels`, backward, gradient
// all-reduce over the trainers, and the optimizer's step, timed.
StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels);

// supervised_step for a GraphSAGE batch whose inputs its loader aggregated
// (LoaderOptions::aggregate_inputs): forward, loss and backward by `step`
// (nn::SageStep, no autograd graph: the same bits), then the all-reduce and
// the optimizer's step; any other batch goes through autograd.
StepResult sage_supervised_step(nn::Sage& model, nn::SageStep& step, torch::optim::Optimizer& optimizer,
                                distributed::Collectives& coll, const sampling::MiniBatch& batch,
                                const torch::Tensor& labels);

// Time a trainer spent per phase over some steps. Sampling and fetching run
// on sampler threads when there are any; `wait` is what the trainer itself
// lost waiting for batches; `sparse` is the push of embedding gradients.
struct PhaseTimes {
  double sample = 0, fetch = 0, wait = 0, compute = 0, allreduce = 0, sparse = 0;
  // CPU time of the trainer's thread over its steps: compute without the
  // time other processes held the core, plus the all-reduce's own share
  // (allreduce_cpu; ZeroMQ's I/O threads do the sockets' encryption), so
  // that step_cpu - allreduce_cpu is compute's CPU time.
  double step_cpu = 0, allreduce_cpu = 0;
  // The same for the sampler threads' sampling and fetch: what a batch
  // cost them, without the time the host's other work held their core.
  double sample_cpu = 0, fetch_cpu = 0;
  int64_t steps = 0, seeds = 0, edges = 0, correct = 0;
  double loss = 0;
  // Per layer, the blocks' sources, destinations and edges summed over the
  // steps: the shapes the step ran at, reported as means (mean_blocks) so
  // that a step's bound can be taken at this trainer's own shapes, which
  // differ between partitions (bench/sage.sh).
  struct BlockSums {
    double src = 0, dst = 0, edges = 0;
  };
  std::vector<BlockSums> blocks;
  void add_batch(const sampling::MiniBatch& b);
  // A training step: its batch, the wait for it, the step (with its sparse update).
  void add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double step_cpu_s);
  void add(const PhaseTimes& o);
  std::string split() const;  // "sample 1.2s fetch ..." for logs
  // The phase times as metrics fields (sample_s, fetch_s, ...).
  nlohmann::json times() const;
};

// What a training run reports at the end, whatever the model.
struct RunSummary {
  double val_acc = -1, test_acc = -1, train_acc = 0, loss = 0;
  int epochs = 0;
  int64_t steps_per_epoch = 0;
  int trainers = 0;
  double total_epoch_s = 0;  // summed over epochs, evaluation excluded
  std::string model_dir;
  nlohmann::json extra = nlohmann::json::object();  // trainer-specific fields of the final record
};

// Checks the shared options' values before anything starts; errors name
// the flag. `fanouts` / `eval_fanouts` receive the per-layer fanouts.
void validate(const NodeTrainOptions& options, std::vector<int64_t>* fanouts, std::vector<int64_t>* eval_fanouts);

// distributed::initialize() with the options' standalone / part_config /
// ip_config / num_threads, then checks --graph-name against the graph.
std::unique_ptr<distributed::Context> join_job(const NodeTrainOptions& options);

// Prints, on the logging trainer, the warning of
// PartitionConfig::without_in_edges_warning when no edge reaches `category`.
void warn_if_unreachable(const distributed::Context& ctx, const std::string& category);

// How an EpochLoop runs.
struct EpochLoopOptions {
  EpochLoopOptions(int epochs = 1, int log_every_steps = 20, int eval_every_epochs = 1)
      : num_epochs(epochs), log_every(log_every_steps), eval_every(eval_every_epochs) {}
  int num_epochs = 1;
  int log_every = 20;  // steps between progress lines
  int eval_every = 1;  // epochs between evaluations; the last epoch always evaluates
  int first_epoch = 0;  // epochs already done (a resumed run starts after them)
  // Resumes from and writes checkpoints (dense_state() of the model, and
  // the servers' tensors); first_epoch is then the checkpoint's. May be null.
  TrainingCheckpoints* checkpoints = nullptr;
  // Called after each epoch (and its checkpoint) with the number of epochs done.
  std::function<void(int epochs_done)> after_epoch;
};
// Fails naming --num-epochs, --log-every or --eval-every when one is below 1.
void check(const EpochLoopOptions& options);

// Node classification on the one TrainLoop (train_loop.h), by epochs. run()
// does, for every epoch: start the loader's epoch,
// call `step` on each batch (timing the wait for it), draw progress, log
// every log_every steps, then write the epoch's metrics record (loss, train
// accuracy, throughput, the time split, host CPU use) and, every eval_every
// epochs, call `evaluate` for (validation, test) accuracy. Each record holds
// "per_trainer": every trainer's own throughput, time split and peak RSS,
// gathered from all of them. Only the logging trainer's run::RunLog writes; every
// trainer runs the same loop.
class EpochLoop {
 public:
  using StepFn = std::function<StepResult(const sampling::MiniBatch& batch)>;
  using EvalFn = std::function<std::pair<double, double>()>;  // (val acc, test acc); -1 for none
  // `ctx` and `log` must outlive the loop.
  EpochLoop(distributed::Context& ctx, run::RunLog& log, EpochLoopOptions options);

  // `steps_per_epoch`: what the loader yields per epoch (common_steps()).
  // Returns the run's summary; totals() holds its summed phase times.
  RunSummary run(sampling::DistDataLoader& loader, int64_t steps_per_epoch, const StepFn& step,
                 const EvalFn& evaluate);
  // Ends the job (Context::finalize) and writes the final record of
  // `summary` (run()'s, with model_dir set if there is one) as the run's
  // last metrics line.
  void finish(const RunSummary& summary);

  const PhaseTimes& totals() const { return all_; }
  double host_cpu_busy() const { return busy_s_ / std::max(1e-9, summary_.total_epoch_s); }

 private:
  distributed::Context& ctx_;
  int num_epochs_;
  TrainLoop loop_;
  PhaseTimes all_;
  RunSummary summary_;
  double busy_s_ = 0;
};

// The run log of a trainer writing into `out_dir`: the logging trainer
// (rank 0) creates the directory and writes out_dir/metrics.jsonl and
// out_dir/run.json (run::RunLog::describe_run) with `tool` (what ran; "" for the
// program's name), `config` (its options), the graph, the partition config,
// the trainers and the ip_config's hosts; the others' logs are silent.
// `append`: a resumed run keeps the metrics records of the runs before it.
run::RunLog open_run_log(distributed::Context& ctx, const std::string& out_dir, const std::string& tool = "",
                    const nlohmann::json& config = nlohmann::json::object(), bool append = false);

// Where a trainer writes: `given` (--out) when set, else the launcher's run
// directory (TESSERA_RUN_DIR, from `tessera launch --run-dir`), else `fallback`.
std::string out_dir_or_default(const std::string& given, const std::string& fallback);

// The options every node-classification trainer shares, as run.json's config.
nlohmann::json to_json(const NodeTrainOptions& options);

// The final record's shared fields (accuracies, epoch time, throughput,
// phase times, host CPU use; finish() adds the peak RSS); each trainer adds its own.
nlohmann::json final_record(const RunSummary& summary, const EpochLoop& loop);

// Accuracy of `logits` over `ids` (this trainer's share, in unshuffled
// batches of `options`), summed over all trainers (collective); -1 when no
// trainer has one. `model` is in eval() mode and gradients are off
// meanwhile; the model is back in train() mode after.
double accuracy(distributed::Context& ctx, torch::nn::Module& model, const sampling::DistNeighborSampler& sampler,
                const std::vector<int64_t>& ids, sampling::LoaderOptions options,
                const std::function<torch::Tensor(const sampling::MiniBatch&)>& logits);

// 1 + the largest label of `label_name` (int64 node data) over all trainers.
int64_t count_classes(distributed::Context& ctx, const std::string& label_name);

// Every trainer starts from trainer 0's weights.
void broadcast_parameters(torch::nn::Module& model, distributed::Collectives& coll);

// --cache-remote-features and --feature-cache-mb, checked before a trainer
// joins its job.
void check_feature_cache(const FeatureCacheOptions& options);
// The trainer's caches of other machines' rows of `tensors` (one per
// tensor: GraphSAGE's 'feat', or each featured node type's on a
// heterogeneous graph), logged to `log`; none when there is nothing to
// cache (standalone, or a share of 0). The tensors share
// --feature-cache-mb in proportion to the bytes each would cache. Its
// loaders share them through LoaderOptions::feature_caches. The tensors are
// read-only partition data. Not collective.
distributed::RemoteRowCaches feature_caches(distributed::Context& ctx,
                                            const std::vector<store::TensorSpec>& tensors,
                                            const FeatureCacheOptions& options, run::RunLog& log);
// What the trainers' caches served, for the final record: rows per trainer
// and the share of remote rows found in a cache. Collective; {} without a
// cache (then no trainer has one).
nlohmann::json feature_cache_summary(distributed::Context& ctx, const distributed::RemoteRowCaches& caches);

// The training loader's options from the shared flags: --batch-size,
// --seed, and --num-samplers sampler threads (else the launcher's count).
sampling::LoaderOptions loader_options(const distributed::Context& ctx, const NodeTrainOptions& options);

// This trainer's seeds given its `share` of the training nodes: the share
// itself, unless some trainer has none (fewer training nodes than trainers,
// since shares are even): then every trainer takes all of them, so each has
// a batch and the averaged gradient is what one trainer would compute.
// Collective.
std::vector<int64_t> every_trainer_gets_seeds(distributed::Context& ctx, const std::vector<int64_t>& share);

// Caps `loader` at the steps every trainer can run per epoch (the minimum
// over trainers, so no all-reduce waits on one that ran out; and at
// --max-batches when >= 0) and returns that count; `total_seeds` gets the
// seeds of all trainers. Collective; fails when a trainer has no batch.
int64_t equalize_steps(distributed::Context& ctx, sampling::DistDataLoader& loader, int64_t max_batches,
                       int64_t* total_seeds);

// Views of a batch's arrays (no copies; the batch must outlive them).
torch::Tensor features_of(const sampling::MiniBatch& batch);
torch::Tensor labels_of(const sampling::MiniBatch& batch);
torch::Tensor rows_of(const Array& rows);  // float32 [n, width]
std::vector<nn::BlockTensors> blocks_of(const sampling::MiniBatch& batch);  // input layer first
// A GraphSAGE model's logits for the batch (`blocks` its blocks_of), through
// forward_aggregated when its loader aggregated the inputs
// (LoaderOptions::aggregate_inputs).
torch::Tensor sage_logits(nn::Sage& model, const sampling::MiniBatch& batch, const std::vector<nn::BlockTensors>& blocks);

}  // namespace tessera::train
