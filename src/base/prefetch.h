// Software prefetch for random row gathers: the next rows' cache lines are
// requested while the current row is copied, so several misses overlap
// instead of each stalling the copy in turn.
#pragma once

#include <cstddef>

namespace tessera {

// How many rows ahead a gather loop prefetches.
constexpr int kPrefetchRows = 8;

inline void prefetch_row(const void* row, size_t bytes) {
  const char* p = static_cast<const char*>(row);
  for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(p + offset, 0, 0);
}

}  // namespace tessera
