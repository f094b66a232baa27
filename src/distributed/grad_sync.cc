#include "tessera/distributed/grad_sync.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// Gradients travel in buckets of at most this many floats (4 MB): few
// collectives for a small model, bounded staging memory for a large one.
constexpr int64_t kBucketFloats = (4 << 20) / sizeof(float);

// Test hook: with TESSERA_TEST_GRADIENT_DUMP=DIR, the first bucket of this
// process's first all-reduce is written as raw float32, as this member sent
// it (DIR/<pid>-local.f32) and as summed (DIR/<pid>-sum.f32), so a test can
// look for the values in a capture of the job's traffic.
void dump_for_tests(const float* values, int64_t count, const char* what) {
  static std::atomic<int> dumped{0};
  const char* dir = std::getenv("TESSERA_TEST_GRADIENT_DUMP");
  if (dir == nullptr || *dir == '\0' || dumped.load() >= 2) return;
  ++dumped;
  const std::string path = fmt::format("{}/{}-{}.f32", dir, ::getpid(), what);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(float)));
  if (!out) fail("TESSERA_TEST_GRADIENT_DUMP: cannot write {}", path);
}

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
    dump_for_tests(bucket.data(), filled, "local");
    coll.all_reduce_sum(bucket.data(), filled);
    dump_for_tests(bucket.data(), filled, "sum");
    const float* src = bucket.data();
    for (const Piece& piece : pieces) {
      for (int64_t i = 0; i < piece.count; ++i) piece.dst[i] = src[i] / members;
      src += piece.count;
    }
  }
}

}  // namespace tessera::distributed
