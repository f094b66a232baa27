#include "tessera/train/accuracy.h"

#include <torch/torch.h>

#include <algorithm>

#include "base/progress.h"
#include "tessera/train/batch_views.h"

namespace tessera::train {

double accuracy(distributed::Context& ctx, torch::nn::Module& model, const sampling::DistNeighborSampler& sampler,
                const std::vector<int64_t>& ids, sampling::LoaderOptions options,
                const std::function<torch::Tensor(const sampling::MiniBatch&)>& logits) {
  torch::NoGradGuard no_grad;
  model.eval();
  options.shuffle = false;
  sampling::DistDataLoader loader(ctx, sampler, ids, options);
  loader.start_epoch(0);
  int64_t counts[2] = {0, 0};  // correct, total
  sampling::MiniBatch batch;
  const int64_t batch_size = std::max<int64_t>(1, options.batch_size);
  Progress bar("evaluating", (static_cast<int64_t>(ids.size()) + batch_size - 1) / batch_size, stdout, ctx.rank() == 0);
  while (loader.next(&batch)) {
    counts[0] += logits(batch).argmax(1).eq(labels_of(batch)).sum().item<int64_t>();
    counts[1] += static_cast<int64_t>(batch.seeds.size());
    bar.add(1);
  }
  model.train();
  ctx.collectives().all_reduce_sum(counts, 2);
  return counts[1] == 0 ? -1.0 : static_cast<double>(counts[0]) / counts[1];
}

}  // namespace tessera::train
