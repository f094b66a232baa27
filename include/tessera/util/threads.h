// Intra-op parallelism. libtorch starts with one thread on some hosts, and
// OpenMP with as many as cores; Tessera sets both explicitly.
#pragma once

namespace tessera {

// n <= 0: TESSERA_NUM_THREADS if set, else 2.
void set_num_threads(int n);
int num_threads();

}  // namespace tessera
