// Node classification accuracy of learned node embeddings, by a logistic regression fitted on the training
// nodes' embeddings: how DGL's unsupervised GraphSAGE scores what it learned (scikit-learn's multinomial
// LogisticRegression, C = 1, on embeddings standardized per column over all the rows given).
//
// Internal header. Plain functions of tensors; nothing here talks to the job. Throws tessera::Error when there
// are no training rows or the shapes disagree.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace tessera::train {

struct ProbeAccuracy {
  double val = -1, test = -1;  // -1: no rows of that split
};

// `emb` [n, d] and `labels` [n] (int64, classes 0..): rows of the nodes; the splits are row indices.
ProbeAccuracy logistic_regression_probe(torch::Tensor emb, const torch::Tensor& labels, const torch::Tensor& train,
                                        const torch::Tensor& val, const torch::Tensor& test);

}  // namespace tessera::train
