#include "train/sage_task.h"

#include <torch/torch.h>

#include <vector>

#include "tessera/base/timer.h"
#include "tessera/train/batch_views.h"

namespace tessera::train {
namespace {

// The destinations' own rows of a batch whose loader aggregated its inputs
// (undefined when it carries none: the "gcn" aggregator needs none).
torch::Tensor destination_rows_of(const sampling::MiniBatch& batch) {
  return batch.features.empty_handle() ? torch::Tensor() : features_of(batch);
}

bool aggregated(const sampling::MiniBatch& batch) { return !batch.aggregated.empty_handle(); }

}  // namespace

nn::SageOptions sage_options(const NodeTrainOptions& o, int64_t in_feats, int64_t outputs,
                             const std::string& aggregator) {
  nn::SageOptions mo;
  mo.in_feats = in_feats;
  mo.hidden = o.num_hidden;
  mo.num_classes = outputs;
  mo.num_layers = o.num_layers;
  mo.dropout = o.dropout;
  mo.aggregator = aggregator;
  nn::validate(mo);
  return mo;
}

SageTask::SageTask(nn::Sage& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll)
    : model_(model), optimizer_(optimizer), coll_(coll) {}

void SageTask::aggregate_inputs(const nn::SageOptions& model, sampling::LoaderOptions* options) {
  options->aggregate_inputs = nn::sage_reduce(model.aggregator);
}

StepResult SageTask::step(const sampling::MiniBatch& batch) { return step(batch, labels_of(batch)); }

StepResult SageTask::step(const sampling::MiniBatch& batch, const torch::Tensor& labels) {
  const std::vector<nn::BlockTensors> blocks = blocks_of(batch);  // views, outside the step's time as before
  if (!aggregated(batch))
    return supervised_step(*model_, optimizer_, coll_, [&] { return logits(batch, blocks); }, labels);
  StepResult r;
  Timer t;
  const nn::SageStepResult own =
      own_step_.run(model_, blocks, destination_rows_of(batch), rows_of(batch.aggregated), labels);
  r.loss = own.loss;
  r.correct = own.correct;
  r.compute_s = t.seconds();
  allreduce_and_step(*model_, optimizer_, coll_, &r);
  return r;
}

torch::Tensor SageTask::logits(const sampling::MiniBatch& batch) { return logits(batch, blocks_of(batch)); }

torch::Tensor SageTask::logits(const sampling::MiniBatch& batch, const std::vector<nn::BlockTensors>& blocks) {
  if (!aggregated(batch)) return model_->forward(blocks, features_of(batch));
  return model_->forward_aggregated(blocks, destination_rows_of(batch), rows_of(batch.aggregated));
}

}  // namespace tessera::train
