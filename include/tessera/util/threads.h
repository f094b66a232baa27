// Intra-op parallelism. libtorch starts with one thread on some hosts, and
// OpenMP and OpenBLAS with as many as cores; Tessera sets all three
// explicitly. OpenBLAS's own pool matters most: its idle threads spin on
// sched_yield, so two workers calling GEMM each with a 2-thread pool on 2
// cores ran KGE training at 40% of the speed of 1-thread pools.
#pragma once

namespace tessera {

// n <= 0: TESSERA_NUM_THREADS if set, else 2.
// Also the calling thread's OpenMP count (worker threads call it for themselves).
void set_num_threads(int n);
int num_threads();

// Large tensors are allocated and freed every training step; glibc maps and
// unmaps each one (and the kernel zero-fills its pages again) unless freed
// memory is kept. Raises the mmap and trim thresholds for this process.
void keep_freed_memory();

}  // namespace tessera
