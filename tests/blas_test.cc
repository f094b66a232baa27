// OpenBLAS's kernel set (tessera/base/blas.h): loading libtessera leaves
// OpenBLAS on the kernels this CPU supports, not on the SSE3 fallback its
// detection picks for CPU models it does not know.
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

}  // namespace
}  // namespace tessera
