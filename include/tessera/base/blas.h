// Which of OpenBLAS's kernel sets this process's GEMMs run on.
//
// Debian's OpenBLAS (0.3.21, built for every x86 core) picks its kernels by the CPU's model number, and models
// it does not know fall back to "Prescott", its SSE3 kernels: on this project's hosts (Intel family 6 model
// 207) that made a 1024^2 GEMM 5.5x and GraphSAGE's skinny GEMMs 2.5x slower than the AVX-512 ("SkylakeX")
// kernels the CPU runs. Loading libtessera therefore switches OpenBLAS from such a fallback to the best set
// the CPU's feature flags allow, through OpenBLAS's own OPENBLAS_CORETYPE, which it also sets for child
// processes. A user's OPENBLAS_CORETYPE is left alone, as is any other BLAS.
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

}  // namespace tessera
