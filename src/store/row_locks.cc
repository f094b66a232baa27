#include "store/row_locks.h"

#include <sched.h>

#include <chrono>

#include "tessera/base/error.h"

namespace tessera::store {

void RowLocks::lock(size_t stripe) {
  std::atomic<uint32_t>& s = stripes_[stripe];
  std::chrono::steady_clock::time_point waiting_since;
  for (int64_t spins = 0;; ++spins) {
    uint32_t expected = 0;
    if (s.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
    // Critical sections are a few hundred bytes of arithmetic; yield rather
    // than burn a core the holder may need (2-core hosts run 8 processes).
    if (spins > 64) sched_yield();
    // A section lasts nanoseconds, so a stripe held for seconds belongs to a
    // process that died inside one (the locks live in shared memory and
    // outlive it): fail rather than spin forever.
    if ((spins & 0xFFFF) == 0xFFFF) {
      const auto now = std::chrono::steady_clock::now();
      if (spins == 0xFFFF) waiting_since = now;
      else if (now - waiting_since > std::chrono::seconds(stuck_after_s_))
        fail("row lock stripe {} has been held for over {} s: a process died while updating a row of this machine's "
             "tensors; restart the job",
             stripe, stuck_after_s_);
    }
  }
}

}  // namespace tessera::store
