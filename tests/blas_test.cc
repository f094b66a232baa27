// OpenBLAS's kernel set (tessera/base/blas.h): loading libtessera leaves
// OpenBLAS on the kernels this CPU supports, not on the SSE3 fallback its
// detection picks for CPU models it does not know; and its idle threads
// sleep at once rather than spin, with GEMMs still right on the restarted pool.
#include <dlfcn.h>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tessera/base/blas.h"

namespace tessera {
namespace {

bool is_fallback(const std::string& core) {
  return core == "Prescott" || core == "Core2" || core == "Nehalem" || core == "Barcelona";
}

TEST(Blas, LoadedTesseraRunsTheKernelsTheCpuSupports) {
  const std::string core = blas_core();
  if (core.empty()) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2 on this CPU";
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced != nullptr && is_fallback(forced)) GTEST_SKIP() << "OPENBLAS_CORETYPE=" << forced << " asks for it";
  EXPECT_FALSE(is_fallback(core)) << "OpenBLAS runs its " << core << " kernels on a CPU with AVX2";
  // Asking again changes nothing.
  EXPECT_EQ(use_best_blas_kernels(), core);
}

TEST(Blas, IdleOpenBlasThreadsSleepAtOnceAndGemmsStillRun) {
  const auto timeout = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "openblas_thread_timeout"));
  const std::string set = sleep_idle_blas_threads();
  if (timeout == nullptr || set.empty()) GTEST_SKIP() << "the BLAS is not a pthread OpenBLAS";
  // Set at load (4) unless the user chose a value, and read again by OpenBLAS
  // (which read its environment before libtessera loaded: 0 if never re-read).
  EXPECT_EQ(std::to_string(timeout()), set);
  // The restarted pool multiplies right on every thread count.
  torch::manual_seed(3);
  const torch::Tensor a = torch::randn({384, 300}), b = torch::randn({300, 520});
  const torch::Tensor want = torch::mm(a.to(torch::kFloat64), b.to(torch::kFloat64));
  for (const int threads : {1, 2, 4}) {
    torch::set_num_threads(threads);
    EXPECT_LT((torch::mm(a, b).to(torch::kFloat64) - want).abs().max().item<double>(), 1e-3) << threads;
  }
}

}  // namespace
}  // namespace tessera
