// Which build of libtessera_kernels.so glibc loads (cmake/kernels.cmake): the
// best level built that the CPU runs, below the cap a masked run sets
// (cmake/tests.cmake runs the kernels' tests again with GLIBC_TUNABLES hiding
// AVX-512, then AVX2, and TESSERA_KERNEL_LEVEL_CAP saying so).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "nn/narrow_gemm.h"
#include "tessera/version.h"

namespace tessera {
namespace {

// 0 for the baseline "x86-64", N for "x86-64-vN".
int rank(const std::string& level) { return level == "x86-64" ? 0 : level.back() - '0'; }

bool cpu_runs(const std::string& level) {
  __builtin_cpu_init();
  if (level == "x86-64-v4") return __builtin_cpu_supports("x86-64-v4");
  if (level == "x86-64-v3") return __builtin_cpu_supports("x86-64-v3");
  if (level == "x86-64-v2") return __builtin_cpu_supports("x86-64-v2");
  return true;
}

std::string expected_level() {
  const char* cap_env = std::getenv("TESSERA_KERNEL_LEVEL_CAP");
  const int cap = cap_env ? rank(cap_env) : 4;
  std::string best = "x86-64";
  std::stringstream built(TESSERA_KERNEL_LEVELS);
  for (std::string level; std::getline(built, level, ',');)
    if (!level.empty() && rank(level) <= cap && rank(level) > rank(best) && cpu_runs(level)) best = level;
  return best;
}

TEST(KernelLevel, IsTheBestBuiltThatTheCpuRuns) {
  EXPECT_EQ(kernel_level(), expected_level()) << "levels built: " << TESSERA_KERNEL_LEVELS;
}

TEST(KernelLevel, NarrowGemmRunsWhereTheKernelsHaveAvx512) {
  // narrow_gemm has an AVX-512 path only; elsewhere gemm() runs the BLAS.
  EXPECT_EQ(nn::detail::narrow_gemm_available(), std::string(kernel_level()) == "x86-64-v4");
}

}  // namespace
}  // namespace tessera
