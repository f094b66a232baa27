// R-GCN's own part of node classification on a heterogeneous graph (ogbn-mag style, `train rgcn`): a batch as the
// model's relation blocks and typed input rows, its training step and its logits. The step runs through autograd
// and ends, as every step does, in allreduce_and_step (through supervised_step); then it pushes the gradients of
// the featureless types' embedding rows to the servers' sparse optimizer, which only backward can give
// (design.md, "The GNN step").
//
// Internal header. The task keeps references to what run_rgcn_training() owns (config, model, optimizer,
// collectives, embeddings, sparse optimizer), which outlive it; step() is collective and runs on the thread of
// the job's Context.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "tessera/distributed/collectives.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/nn/rgcn.h"
#include "tessera/partition/partition_config.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/train/gradient_step.h"

namespace tessera::train {

class RgcnTask {
 public:
  // embeddings[t]: node type t's learnable embedding on the servers, null
  // for a type whose 'feat' is the input; `sparse` updates them (null when
  // no type has one).
  RgcnTask(const PartitionConfig& config, nn::Rgcn& model, torch::optim::Optimizer& optimizer,
           distributed::Collectives& coll, const std::vector<std::unique_ptr<distributed::DistEmbedding>>& embeddings,
           distributed::SparseOptimizer* sparse);

  StepResult step(const sampling::MiniBatch& batch);
  // The model's logits for the batch in its current mode; embedding rows
  // are read as they are (no gradient).
  torch::Tensor logits(const sampling::MiniBatch& batch);

 private:
  const PartitionConfig& config_;
  nn::Rgcn& model_;
  torch::optim::Optimizer& optimizer_;
  distributed::Collectives& coll_;
  const std::vector<std::unique_ptr<distributed::DistEmbedding>>& embeddings_;
  distributed::SparseOptimizer* sparse_;
};

}  // namespace tessera::train
