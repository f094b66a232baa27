// `tessera train link`: link prediction on a partitioned graph, as DGL's distributed unsupervised GraphSAGE and
// OGB's link examples do it. Every trainer takes its share of the training edges in mini-batches; for each edge
// the batch draws negative pairs (k corrupted destinations), samples the blocks of the pairs' nodes with the
// batch's edges and their reverses left out, embeds the nodes with GraphSAGE and scores the pairs with a dot
// product or an MLP, trained by binary cross-entropy. Evaluation ranks each held-out edge of the partition
// (tessera partition --valid-edges / --test-edges) against sampled negative destinations, as OGB's
// ogbl-citation2: MRR and Hits@{1,10,50}; optionally, the accuracy of a logistic regression on the embeddings
// of the labelled nodes, as DGL's example scores them.
//
// run_link_training() joins the job itself and owns what it creates until it returns; it is collective (every
// trainer runs it with the same options), from the main thread. Errors throw tessera::Error naming the flag
// (--decoder, --num-negs, --eval-negatives, --exclude, fanouts) or the file (no held-out edges, a typed graph).
#pragma once

#include <string>

#include "tessera/train/node_train_options.h"

namespace tessera::train {

struct LinkTrainOptions : NodeTrainOptions, FeatureCacheOptions {
  std::string decoder = "dot";    // --decoder: dot | mlp
  int64_t num_negs = 1;           // --num-negs: negatives per positive edge (uniform destinations)
  int64_t eval_negatives = 100;   // --eval-negatives: negatives each held-out edge is ranked against
  std::string exclude = "reverse";  // --exclude: reverse (the batch's edges both ways) | self | none
  // --logistic-regression: after training, the node classification accuracy
  // of the embeddings (DGL's protocol: fitted on the train_mask nodes).
  bool logistic_regression = false;
  // DGL's unsupervised example: fanout 10,25, batch 1000, lr 0.003; evaluation over all neighbours.
  LinkTrainOptions() : NodeTrainOptions(5, {10, 25}, {-1}, 1000, 10000, 1, 0.003, 0.0) {}
};

// Runs the job; returns the process exit code. Errors throw tessera::Error.
int run_link_training(const LinkTrainOptions& options);

}  // namespace tessera::train
