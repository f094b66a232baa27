// How every training step of a dense model ends (the contract design.md's "The GNN step" states): the gradients
// in each parameter's grad(), then their all-reduce over the trainers, then the optimizer's step. A step whose
// loss autograd differentiates reaches that end through apply_gradients (or supervised_step, which also takes
// the loss); a step that writes its gradients itself (nn::SageStep) calls allreduce_and_step.
//
// Contract: every function here but the StepResult itself is collective over `coll` (every trainer calls it in
// the same order, with a model of the same parameter shapes). Times are added to the StepResult, never reset.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>

#include "tessera/distributed/collectives.h"

namespace tessera::train {

// What one optimizer step gives back.
struct StepResult {
  double loss = 0;
  int64_t correct = 0;                  // seeds whose prediction is right (node classification)
  double compute_s = 0, allreduce_s = 0;
  double allreduce_cpu_s = 0;           // the calling thread's CPU time in the all-reduce
  double sparse_s = 0;                  // the push of embedding gradients, if the step has one
};

// The gradient all-reduce over the trainers and the optimizer's step, on
// the gradients the parameters hold: the end of every step. Adds the
// all-reduce's time to r->allreduce_s (and its CPU to r->allreduce_cpu_s),
// the step's to r->compute_s.
void allreduce_and_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                        StepResult* r);

// Backward of `loss` into fresh gradients, then allreduce_and_step. Adds the
// backward's time to r->compute_s.
void apply_gradients(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                     const torch::Tensor& loss, StepResult* r);

// Cross-entropy of forward()'s logits against `labels` (the accuracy count
// in the same pass), then apply_gradients, timed.
StepResult supervised_step(torch::nn::Module& model, torch::optim::Optimizer& optimizer, distributed::Collectives& coll,
                           const std::function<torch::Tensor()>& forward, const torch::Tensor& labels);

// Every trainer starts from trainer 0's weights.
void broadcast_parameters(torch::nn::Module& model, distributed::Collectives& coll);

}  // namespace tessera::train
