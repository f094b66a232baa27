// Dense float GEMM rate through libtorch, to show which BLAS the project's
// binaries call: the reference BLAS runs ~6 GFLOP/s here, OpenBLAS 75-100.
#include <torch/torch.h>

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

int main() {
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
