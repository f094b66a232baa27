// A mini-batch's arrays as torch tensors, for a model's forward: views of the batch's memory, no copies. The
// batch must outlive the tensors and stay unchanged while they are in use; they are not writable in place
// (autograd may read them, nothing may write them).
#pragma once

#include <torch/types.h>

#include <vector>

#include "tessera/base/array.h"
#include "tessera/nn/sage.h"  // BlockTensors
#include "tessera/sampling/data_loader.h"

namespace tessera::train {

torch::Tensor rows_of(const Array& rows);                   // float32 [n, width]
torch::Tensor features_of(const sampling::MiniBatch& batch);  // the input rows: float32 [inputs, width]
torch::Tensor labels_of(const sampling::MiniBatch& batch);    // int64 [seeds]
std::vector<nn::BlockTensors> blocks_of(const sampling::MiniBatch& batch);  // input layer first

}  // namespace tessera::train
