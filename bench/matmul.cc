// Dense float GEMM rate through libtorch, to show which BLAS the project's
// binaries call: the reference BLAS runs ~6 GFLOP/s here, OpenBLAS 75-100.
//
// `bench_matmul --kge-step C K D N [THREADS]`: the time of one KGE step's own
// matrix products at a model's shapes (C chunks of K positives scored against
// N shared negatives of width D: [K x D] x [D x N] per chunk forward, and the
// two products of its backward pass), best of 30 repeats. bench/kge.sh
// divides a training rate by it: the share of the physical bound.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include <fmt/format.h>

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

// One step's products: forward scores and the gradients of both operands.
int kge_step_bound(int64_t c, int64_t k, int64_t d, int64_t n, int threads) {
  torch::set_num_threads(threads);
  const auto anchor = torch::randn({c, k, d}), negatives = torch::randn({c, n, d}), grad = torch::randn({c, k, n});
  double best = 1e9;
  for (int rep = 0; rep < 33; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    (void)torch::bmm(anchor, negatives.transpose(1, 2));  // scores [c, k, n]
    (void)torch::bmm(grad, negatives);                    // d anchor [c, k, d]
    (void)torch::bmm(grad.transpose(1, 2), anchor);       // d negatives [c, n, d]
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rep >= 3) best = std::min(best, s);  // the first ones warm up
  }
  const double flop = 3 * 2.0 * c * k * d * n;
  fmt::print("kge step products {} x [{} x {}] x [{} x {}], forward + backward, {} threads: {:.3f} ms, {:.1f} GFLOP/s\n",
             c, k, d, d, n, threads, 1e3 * best, flop / best / 1e9);
  fmt::print("bound_ms {:.4f}\n", 1e3 * best);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 6 && std::string(argv[1]) == "--kge-step")
    return kge_step_bound(std::stoll(argv[2]), std::stoll(argv[3]), std::stoll(argv[4]), std::stoll(argv[5]),
                          argc > 6 ? std::stoi(argv[6]) : 2);
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
  fmt::print("BLAS library: {}\n", mapped_blas());
  return 0;
}
