#include "store/row_locks.h"

#include <sched.h>

#include <chrono>

#include "tessera/base/error.h"

namespace tessera::store {

void RowLocks::lock(size_t stripe) {
  std::atomic<uint32_t>& s = stripes_[stripe];
  std::chrono::steady_clock::time_point waiting_since, checked;
  for (int64_t spins = 0;; ++spins) {
    uint32_t expected = 0;
    if (s.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
    // Critical sections are a few hundred bytes of arithmetic; yield rather
    // than burn a core the holder may need (2-core hosts run 8 processes).
    if (spins > 64) sched_yield();
    if ((spins & 0xFF) != 0xFF) continue;
    // Timed by the clock, not by spins: a yield lasts anything from a
    // microsecond to a time slice, depending on who else wants the core.
    const auto now = std::chrono::steady_clock::now();
    if (spins == 0xFF) {
      waiting_since = checked = now;
      continue;
    }
    if (check_while_waiting_ && now - checked > std::chrono::milliseconds(100)) {
      checked = now;
      check_while_waiting_();
    }
    // A section lasts nanoseconds, so a stripe held for seconds belongs to a
    // process that died inside one (the locks live in shared memory and
    // outlive it): fail rather than spin forever.
    if (now - waiting_since > std::chrono::seconds(stuck_after_s_))
      fail("row lock stripe {} has been held for over {} s: a process died while updating a row of this machine's "
           "tensors; restart the job",
           stripe, stuck_after_s_);
  }
}

}  // namespace tessera::store
