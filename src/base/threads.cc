#include "tessera/base/threads.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "tessera/base/error.h"

namespace tessera {

int threads_from_environment() {
  for (const char* name : {"TESSERA_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    const int asked = value != nullptr ? std::atoi(value) : 0;  // "4,2" (nested levels): 4
    if (asked > 0) return asked;
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

void lower_sampler_priority() {
  int nice = kSamplerNice;
  if (const char* value = std::getenv("TESSERA_SAMPLER_NICE"); value != nullptr && *value != '\0') {
    char* end = nullptr;
    errno = 0;
    const long asked = std::strtol(value, &end, 10);
    if (errno != 0 || *end != '\0' || asked < 0 || asked > 19)
      fail("TESSERA_SAMPLER_NICE is '{}', expected an integer from 0 (the trainer's priority) to 19", value);
    nice = static_cast<int>(asked);
  }
  if (nice == 0) return;
  // Relative to the thread's own (inherited from the process: a job started
  // under `nice` keeps its offset). Raising one's own nice value needs no
  // privilege; if the host refuses, the sampler runs at the trainer's
  // priority, as before.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  (void)setpriority(PRIO_PROCESS, tid, std::min(19, (errno == 0 ? now : 0) + nice));
}

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

int num_threads() { return at::get_num_threads(); }

}  // namespace tessera
