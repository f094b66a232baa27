// GraphSAGE's own part of node classification (design.md, "The GNN step"): the input aggregation its loader does,
// its training step and its logits, so that `train sage` (sage_train.cc) and the bench of its step
// (bench/sage_step.cc) run one path. The step takes the hand-written path (nn::SageStep: forward, loss and
// backward with no autograd graph) when the loader aggregated the batch's inputs, and autograd otherwise; both
// give the same bits, and both end in allreduce_and_step (gradient_step.h), as every step does.
//
// Internal header. The task keeps references to the model, optimizer and collectives, which outlive it; step()
// is collective and runs on one thread at a time (its buffers last from one step to the next).
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/distributed/collectives.h"
#include "tessera/nn/sage.h"
#include "tessera/nn/sage_step.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/gradient_step.h"
#include "tessera/train/node_train_options.h"

namespace tessera::train {

// A GraphSAGE stack from the shared flags (--num-hidden, --num-layers,
// --dropout): `in_feats` inputs, `outputs` logits, `aggregator`'s layers.
nn::SageOptions sage_options(const NodeTrainOptions& options, int64_t in_feats, int64_t outputs,
                             const std::string& aggregator);

class SageTask {
 public:
  SageTask(nn::Sage& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll);

  // Has a loader aggregate layer 0's inputs on its sampler threads, where
  // the rows are read anyway, with `model`'s aggregator: the batches that
  // step() takes the hand-written path on.
  static void aggregate_inputs(const nn::SageOptions& model, sampling::LoaderOptions* options);

  // One optimizer step on the batch against its labels (labels_of(batch)
  // unless given).
  StepResult step(const sampling::MiniBatch& batch);
  StepResult step(const sampling::MiniBatch& batch, const torch::Tensor& labels);

  // The model's logits for the batch, in the model's current mode: through
  // forward_aggregated when the loader aggregated its inputs.
  torch::Tensor logits(const sampling::MiniBatch& batch);

 private:
  torch::Tensor logits(const sampling::MiniBatch& batch, const std::vector<nn::BlockTensors>& blocks);

  nn::Sage& model_;
  torch::optim::Optimizer& optimizer_;
  distributed::Collectives& coll_;
  nn::SageStep own_step_;
};

}  // namespace tessera::train
