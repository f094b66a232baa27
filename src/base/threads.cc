#include "tessera/base/threads.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <dlfcn.h>
#include <malloc.h>

#include <cstdlib>

namespace tessera {

int threads_from_environment() {
  for (const char* name : {"TESSERA_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && std::atoi(value) > 0) return std::atoi(value);  // "4,2" (nested levels): 4
  }
  return 0;
}

void set_num_threads(int n) {
  if (n <= 0) {
    const int asked = threads_from_environment();
    n = asked > 0 ? asked : 2;
  }
  omp_set_num_threads(n);
  at::set_num_threads(n);
  // Present when the system BLAS is OpenBLAS; looked up so any BLAS links.
  using SetBlasThreads = void (*)(int);
  if (auto set_blas = reinterpret_cast<SetBlasThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set_blas(n);
}

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

int num_threads() { return at::get_num_threads(); }

}  // namespace tessera
