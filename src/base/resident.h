// Bringing mapped memory into a process's page tables ahead of use. A partition's arrays are mapped from its
// files and read at random by sampling and feature fetch: each page touched for the first time is a page fault,
// costly in a virtual machine. One madvise per array maps them all at load instead, as DistDGL's loading of the
// partition into memory pays for them up front. Measured on the 2-core host (bench/sage.sh (b), 4 epochs, two
// rounds): 17,000-20,000 fewer faults in the job, and the sampler thread's fetch CPU per batch 5.1-5.4 -> 4.5-4.8
// ms.
#pragma once

#include <cstddef>

namespace tessera {

// Maps the pages of [data, data + bytes) that the file (or memory) behind them already has, without faulting
// one by one (MADV_POPULATE_READ, Linux >= 5.14). A hint: where the kernel lacks it, or the range cannot be
// populated, nothing happens and later reads fault as before. Never throws.
void make_resident(const void* data, size_t bytes);

}  // namespace tessera
