#include "base/resident.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace tessera {

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older headers lack the name
#endif

void make_resident(const void* data, size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  // An error (EINVAL on an older kernel, ENOMEM past the mapping) leaves the
  // pages to fault in on first use, which is correct, only slower.
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
}

}  // namespace tessera
