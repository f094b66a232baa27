// Dense float GEMM rate through libtorch, to show which BLAS the project's
// binaries call, and which of OpenBLAS's kernel sets (tessera/base/blas.h):
// the reference BLAS runs ~6 GFLOP/s here, OpenBLAS's SSE3 fallback ~45,
// its AVX-512 kernels over 200.
//
// `bench_matmul --kge-step C K D N [THREADS] [MODEL]`: the time of one KGE
// step's own matrix products at a model's shapes (C chunks of K positives
// scored against N shared negatives of width D: [K x D] x [D x N] per chunk
// forward, the two products of its backward pass, and RESCAL's and TransR's
// relation matrices), best of 10 repeats. bench/kge.sh divides a training
// rate by it: the share of the physical bound.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tessera/base/blas.h"

// The libblas.so.3 this process actually mapped.
static std::string mapped_blas() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libblas") != std::string::npos || line.find("libopenblas") != std::string::npos)
      return line.substr(line.find('/'));
  }
  return "(none mapped)";
}

// A product and the two of its backward pass (the gradient of each operand):
// a [.., m x d] x [.., d x n] batched product costs three.
void product_with_gradients(const torch::Tensor& a, const torch::Tensor& b) {
  const auto out = torch::bmm(a, b);
  (void)torch::bmm(out, b.transpose(1, 2));  // d a
  (void)torch::bmm(a.transpose(1, 2), out);  // d b
}

// One step's own products, by model (C chunks of K positives, N shared
// negatives a chunk, width D), as operand pairs: the chunk scores of every
// model but TransR; RESCAL adds each positive's query, its relation's
// [D x D] matrix times a vector; TransR instead projects heads, tails and,
// for every positive, the chunk's N negatives by its relation's [D x D]
// matrix (DGL-KE's form). Operands are made once, outside the timing.
std::vector<std::pair<torch::Tensor, torch::Tensor>> kge_step_operands(const std::string& model, int64_t c, int64_t k,
                                                                         int64_t d, int64_t n) {
  const int64_t b = c * k;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> pairs;
  if (model != "TransR") pairs.emplace_back(torch::randn({c, k, d}), torch::randn({c, d, n}));
  if (model == "RESCAL") pairs.emplace_back(torch::randn({b, d, d}), torch::randn({b, d, 1}));
  if (model == "TransR") {
    const auto matrices = torch::randn({b, d, d});
    pairs.emplace_back(torch::randn({b, 2, d}), matrices);  // head and tail of each positive
    pairs.emplace_back(torch::randn({b, n, d}), matrices);  // the negatives, for each positive
  }
  return pairs;
}

int kge_step_bound(const std::string& model, int64_t c, int64_t k, int64_t d, int64_t n, int threads) {
  torch::set_num_threads(threads);
  const std::vector<std::string> models{"TransE_l1", "TransE_l2", "DistMult", "ComplEx",
                                        "RotatE",    "RESCAL",    "TransR",   "SimplE"};
  if (std::find(models.begin(), models.end(), model) == models.end()) {
    fmt::print(stderr, "bench_matmul --kge-step: unknown model '{}' (expected one of DGL-KE's eight)\n", model);
    return 2;
  }
  const auto operands = kge_step_operands(model, c, k, d, n);
  double best = 1e9;
  for (int rep = 0; rep < 13; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& [a, b] : operands) product_with_gradients(a, b);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep >= 3) best = std::min(best, s);  // the first ones warm up
  }
  fmt::print("kge step products of {} ({} chunks of {} positives, {} negatives, d {}), forward + backward, {} threads: "
             "{:.3f} ms\n",
             model, c, k, n, d, threads, 1e3 * best);
  fmt::print("bound_ms {:.4f}\n", 1e3 * best);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 6 && std::string(argv[1]) == "--kge-step")
    return kge_step_bound(argc > 7 ? argv[7] : "TransE_l2", std::stoll(argv[2]), std::stoll(argv[3]),
                          std::stoll(argv[4]), std::stoll(argv[5]), argc > 6 ? std::stoi(argv[6]) : 2);
  torch::set_num_threads(2);
  const int64_t n = 1024;
  auto a = torch::randn({n, n});
  auto b = torch::randn({n, n});
  for (int i = 0; i < 3; ++i) (void)torch::mm(a, b);  // warm up
  const int reps = 20;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) (void)torch::mm(a, b);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gflops = 2.0 * n * n * n * reps / s / 1e9;
  fmt::print("{:<28} {:>10} {:>10} {:>12}\n", "benchmark", "threads", "ms/matmul", "GFLOP/s");
  fmt::print("{:<28} {:>10} {:>10.2f} {:>12.1f}\n", "matmul 1024x1024 float32", torch::get_num_threads(), 1e3 * s / reps, gflops);
  fmt::print("BLAS library: {} (kernels: {})\n", mapped_blas(), tessera::blas_core());
  return 0;
}
