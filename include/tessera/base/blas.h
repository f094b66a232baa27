// Which of OpenBLAS's kernel sets this process's GEMMs run on.
//
// Debian's OpenBLAS (0.3.21, built for every x86 core) picks its kernels by the CPU's model number, and models
// it does not know fall back to "Prescott", its SSE3 kernels: on this project's hosts (Intel family 6 model
// 207) that made a 1024^2 GEMM 5.5x and GraphSAGE's skinny GEMMs 2.5x slower than the AVX-512 ("SkylakeX")
// kernels the CPU runs. Loading libtessera therefore switches OpenBLAS from such a fallback to the best set
// the CPU's feature flags allow, through OpenBLAS's own OPENBLAS_CORETYPE, which it also sets for child
// processes. A user's OPENBLAS_CORETYPE is left alone, as is any other BLAS.
//
// It also makes OpenBLAS's idle threads sleep at once instead of spinning on sched_yield() for 2^28 cycles
// (about 0.1 s) after each GEMM: a step that interleaves GEMMs with libtorch's or Tessera's own OpenMP work
// (softmax, dropout, the optimizer) had both of OpenBLAS's threads yield-spinning through it on the same 2
// cores; perf put 22% of a KvsAll step's samples in sched_yield, and the step ran 5-18% faster without it.
// Through OpenBLAS's own OPENBLAS_THREAD_TIMEOUT (its minimum, 4: 16 cycles), set for child processes too; a
// user's value is left alone.
#pragma once

#include <string>

namespace tessera {

// OpenBLAS's name of the kernel set in use ("SkylakeX", "Haswell", ...), or
// "" when the process's BLAS is not OpenBLAS.
std::string blas_core();

// What libtessera does when it is loaded (idempotent; call it before any
// other thread runs BLAS work): switches OpenBLAS from a fallback kernel set
// to the best one the CPU supports. Returns the set in use afterwards.
std::string use_best_blas_kernels();

// Also at load (same conditions): OpenBLAS's idle threads sleep at once
// (above). Returns the timeout in effect (OPENBLAS_THREAD_TIMEOUT's value),
// or "" when the process's BLAS is not a pthread OpenBLAS.
std::string sleep_idle_blas_threads();

}  // namespace tessera
