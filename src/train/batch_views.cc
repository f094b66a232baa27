#include "tessera/train/batch_views.h"

#include <torch/torch.h>

#include <algorithm>

namespace tessera::train {

torch::Tensor rows_of(const Array& rows) {
  const int64_t n = rows.shape()[0];
  return torch::from_blob(const_cast<void*>(rows.raw()), {n, rows.numel() / std::max<int64_t>(1, n)},
                          torch::kFloat32);
}

torch::Tensor features_of(const sampling::MiniBatch& batch) { return rows_of(batch.features); }

torch::Tensor labels_of(const sampling::MiniBatch& batch) {
  return torch::from_blob(const_cast<void*>(batch.labels.raw()), {batch.labels.shape()[0]}, torch::kInt64);
}

std::vector<nn::BlockTensors> blocks_of(const sampling::MiniBatch& batch) {
  std::vector<nn::BlockTensors> blocks;
  for (const sampling::Block& b : batch.blocks) blocks.push_back(nn::block_view(b.indptr, b.indices, b.num_src()));
  return blocks;
}

}  // namespace tessera::train
