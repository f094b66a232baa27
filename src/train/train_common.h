// What the node-classification trainers (`tessera train sage`, `tessera
// train rgcn`) share: per-phase timing, fanout flags, class counting, the
// start-from-trainer-0 broadcast, equal step counts, and batch tensors.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/dist/context.h"
#include "tessera/sampling/data_loader.h"

namespace tessera::train {

// What one optimizer step of node classification gives back.
struct StepResult {
  double loss = 0;
  int64_t correct = 0;                  // seeds whose prediction is right
  double compute_s = 0, allreduce_s = 0;
};

// Cross-entropy of forward()'s logits against `labels`, backward, gradient
// all-reduce over the trainers, and the optimizer's step, timed.
StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, dist::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels);

// Time a trainer spent per phase over some steps. Sampling and fetching run
// on sampler threads when there are any; `wait` is what the trainer itself
// lost waiting for batches; `sparse` is the push of embedding gradients.
struct PhaseTimes {
  double sample = 0, fetch = 0, wait = 0, compute = 0, allreduce = 0, sparse = 0;
  int64_t steps = 0, seeds = 0, edges = 0, correct = 0;
  double loss = 0;
  void add_batch(const sampling::MiniBatch& b);
  // A training step: its batch, the wait for it, the step, the sparse update.
  void add_step(const sampling::MiniBatch& b, double wait_s, const StepResult& step, double sparse_s = 0);
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
};
// The final record's shared fields (accuracies, epoch time, throughput,
// phase times, peak RSS); each trainer adds its own.
nlohmann::json final_record(const RunSummary& summary, const PhaseTimes& all);

// --fan-out style flag for `layers` layers; one value applies to all.
std::vector<int64_t> layer_fanouts(const std::string& text, int layers, const char* flag);

// 1 + the largest label of `label_name` (int64 node data) over all trainers.
int64_t count_classes(dist::Context& ctx, const std::string& label_name);

// Every trainer starts from trainer 0's weights.
void broadcast_parameters(torch::nn::Module& model, dist::Collectives& coll);

// The steps every trainer can run per epoch (the minimum over trainers, so
// no all-reduce waits on one that ran out), capped by max_batches >= 0; also
// the total of `local_seeds` over trainers.
int64_t common_steps(dist::Context& ctx, int64_t local_steps, int64_t local_seeds, int64_t max_batches,
                     int64_t* total_seeds);

// Views of a batch's arrays (no copies; the batch must outlive them).
torch::Tensor features_of(const sampling::MiniBatch& batch);
torch::Tensor labels_of(const sampling::MiniBatch& batch);
torch::Tensor rows_of(const Array& rows);  // float32 [n, width]

}  // namespace tessera::train
