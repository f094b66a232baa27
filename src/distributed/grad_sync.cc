#include "tessera/distributed/grad_sync.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Gradients travel in buckets of at most this many floats (4 MB): few
// collectives for a small model, bounded staging memory for a large one.
constexpr int64_t kBucketFloats = (4 << 20) / sizeof(float);

}  // namespace

void allreduce_gradients(torch::nn::Module& model, Collectives& coll) {
  if (coll.size() <= 1) return;

  // Every member must walk the same parameters in the same order, so a
  // missing gradient becomes zeros rather than being skipped.
  std::vector<float*> data;
  std::vector<int64_t> sizes;
  int64_t total = 0;
  for (torch::Tensor& p : model.parameters()) {
    if (!p.requires_grad()) continue;
    torch::Tensor& g = p.mutable_grad();
    if (!g.defined()) {
      g = torch::zeros_like(p);
    } else if (!g.is_contiguous()) {
      g = g.contiguous();
    }
    if (g.scalar_type() != torch::kFloat32 || !g.device().is_cpu())
      fail("allreduce_gradients: gradients must be float32 on the CPU, got {} on {}", c10::toString(g.scalar_type()),
           g.device().str());
    data.push_back(g.data_ptr<float>());
    sizes.push_back(g.numel());
    total += g.numel();
  }
  if (total == 0) return;

  // The gradients form one virtual array; each bucket is a window of it,
  // which may cut a large parameter into pieces.
  std::vector<float> bucket(std::min(total, kBucketFloats));
  const float members = static_cast<float>(coll.size());
  size_t param = 0;
  int64_t offset = 0;  // into data[param]
  while (param < data.size()) {
    struct Piece {
      float* dst;
      int64_t count;
    };
    std::vector<Piece> pieces;
    int64_t filled = 0;
    while (param < data.size() && filled < static_cast<int64_t>(bucket.size())) {
      const int64_t n = std::min(sizes[param] - offset, static_cast<int64_t>(bucket.size()) - filled);
      std::memcpy(bucket.data() + filled, data[param] + offset, n * sizeof(float));
      pieces.push_back({data[param] + offset, n});
      filled += n;
      offset += n;
      if (offset == sizes[param]) {
        ++param;
        offset = 0;
      }
    }
    coll.all_reduce_sum(bucket.data(), filled);
    const float* src = bucket.data();
    for (const Piece& piece : pieces) {
      for (int64_t i = 0; i < piece.count; ++i) piece.dst[i] = src[i] / members;
      src += piece.count;
    }
  }
}

}  // namespace tessera::distributed
