#include "tessera/util/threads.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <cstdlib>

namespace tessera {

void set_num_threads(int n) {
  if (n <= 0) {
    const char* env = std::getenv("TESSERA_NUM_THREADS");
    n = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 2;
  }
  omp_set_num_threads(n);
  at::set_num_threads(n);
}

int num_threads() { return at::get_num_threads(); }

}  // namespace tessera
