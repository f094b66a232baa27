// Intra-op parallelism. libtorch starts with one thread on some hosts, and OpenMP and OpenBLAS with as many as
// cores; Tessera sets all three explicitly. OpenBLAS's own pool matters most: its idle threads spin on
// sched_yield, so two workers calling GEMM each with a 2-thread pool on 2 cores ran KGE training at 40% of the
// speed of 1-thread pools.
//
// These functions change process-wide settings (libtorch's and OpenBLAS's pools, malloc thresholds) except the
// OpenMP count, which omp_set_num_threads sets for the calling thread only; call them at startup, or from each
// worker thread for its own OpenMP count, not while other threads run parallel work. They throw nothing: a bad
// TESSERA_NUM_THREADS or OMP_NUM_THREADS is ignored, and a BLAS other than OpenBLAS is left alone.
#pragma once

namespace tessera {

// The count the environment asks for: TESSERA_NUM_THREADS, else OMP_NUM_THREADS (its first level), as PyTorch
// and DGL's launcher read it; 0 when neither holds a positive integer.
int threads_from_environment();

// n <= 0: threads_from_environment(), else 2.
// Also the calling thread's OpenMP count (worker threads call it for themselves).
void set_num_threads(int n);
int num_threads();

// Sampler threads prepare batches ahead of the trainer's step. Where a host
// has fewer cores than busy threads (2 trainers, their samplers and 2
// servers on 2 cores), the step should not wait behind a batch that is not
// needed yet: this lowers the calling thread's scheduling priority (Linux
// keeps a nice value per thread) by TESSERA_SAMPLER_NICE, 0 to 19, default
// kSamplerNice. Unlike the functions above it throws tessera::Error for a
// malformed value, naming the variable.
constexpr int kSamplerNice = 5;
void lower_sampler_priority();

// Large tensors are allocated and freed every training step; glibc maps and
// unmaps each one (and the kernel zero-fills its pages again) unless freed
// memory is kept. Raises the mmap and trim thresholds for this process.
void keep_freed_memory();

}  // namespace tessera
