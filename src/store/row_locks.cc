#include "store/row_locks.h"

#include <sched.h>

namespace tessera::store {

void RowLocks::lock(size_t stripe) {
  std::atomic<uint32_t>& s = stripes_[stripe];
  for (int spins = 0;; ++spins) {
    uint32_t expected = 0;
    if (s.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
    // Critical sections are a few hundred bytes of arithmetic; yield rather
    // than burn a core the holder may need (2-core hosts run 8 processes).
    if (spins > 64) sched_yield();
  }
}

}  // namespace tessera::store
