#include "tessera/base/blas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace tessera {
namespace {

// OpenBLAS's exported entry points, looked up so that any BLAS links.
template <typename F>
F openblas_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

// The kernel sets OpenBLAS 0.3.21's detection falls back to for CPUs it
// does not recognise (Intel and AMD), none of which uses AVX.
bool is_fallback(const char* core) {
  for (const char* fallback : {"Prescott", "Core2", "Nehalem", "Barcelona"})
    if (std::strcmp(core, fallback) == 0) return true;
  return false;
}

// The best set these feature flags allow, or nullptr for none better than
// the fallbacks.
const char* best_core_for_this_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  if (__builtin_cpu_supports("avx")) return "SandyBridge";
  return nullptr;
}

// Runs when libtessera is loaded, after the libraries it needs (OpenBLAS
// among them) have initialised, and before any thread of the process can
// have started GEMM work through Tessera.
__attribute__((constructor)) void choose_blas_kernels_at_load() {
  use_best_blas_kernels();
  sleep_idle_blas_threads();
}

}  // namespace

std::string blas_core() {
  const auto corename = openblas_symbol<char* (*)()>("openblas_get_corename");
  return corename == nullptr ? "" : corename();
}

std::string use_best_blas_kernels() {
  const auto corename = openblas_symbol<char* (*)()>("openblas_get_corename");
  const auto quit = openblas_symbol<void (*)()>("gotoblas_dynamic_quit");
  const auto init = openblas_symbol<void (*)()>("gotoblas_dynamic_init");
  // Only a DYNAMIC_ARCH OpenBLAS can switch; the user's choice stands.
  if (corename == nullptr || quit == nullptr || init == nullptr || std::getenv("OPENBLAS_CORETYPE") != nullptr)
    return blas_core();
  const char* best = best_core_for_this_cpu();
  if (best == nullptr || !is_fallback(corename())) return corename();
  // gotoblas_dynamic_init() keeps a chosen set until quit() clears it, and
  // reads OPENBLAS_CORETYPE to choose the next; the variable stays set so
  // that child processes start on the same set.
  ::setenv("OPENBLAS_CORETYPE", best, 1);
  quit();
  init();
  return corename();
}

std::string sleep_idle_blas_threads() {
  const auto read_env = openblas_symbol<void (*)()>("openblas_read_env");
  const auto shutdown = openblas_symbol<int (*)()>("blas_thread_shutdown_");
  const auto start = openblas_symbol<int (*)()>("blas_thread_init");
  if (read_env == nullptr || shutdown == nullptr || start == nullptr) return "";
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) {
    // OpenBLAS read its environment when it loaded and its thread pool took
    // the timeout then: read it again and restart the (idle) pool.
    ::setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    read_env();
    shutdown();
    start();
  }
  return std::getenv("OPENBLAS_THREAD_TIMEOUT");
}

}  // namespace tessera
