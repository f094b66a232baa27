// Striped spin locks over a block of shared memory, so that the processes of
// one machine (main and backup servers) can update the same rows of a shared
// tensor without losing writes. Rows hash onto stripes; a stripe guards every
// row that maps to it, and all the state of that row (value, optimizer state).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace tessera::store {

class RowLocks {
 public:
  static constexpr size_t kStripes = 1 << 16;
  static constexpr size_t kBytes = kStripes * sizeof(uint32_t);

  RowLocks() = default;
  // A stripe held this long is taken for one whose holder died inside its
  // section (shared-memory locks outlive processes): lock() then fails.
  static constexpr int kStuckAfterS = 10;

  // `memory` holds kBytes, zero-filled on first use, shared by all users.
  explicit RowLocks(void* memory, int stuck_after_s = kStuckAfterS)
      : stripes_(static_cast<std::atomic<uint32_t>*>(memory)), stuck_after_s_(stuck_after_s) {}

  static size_t stripe(uint64_t tensor_key, int64_t row) {
    uint64_t x = tensor_key ^ (static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 29;
    return static_cast<size_t>(x & (kStripes - 1));
  }
  void lock(size_t stripe);
  void unlock(size_t stripe) { stripes_[stripe].store(0, std::memory_order_release); }
  // `check` runs every 100 ms while lock() waits for a stripe, on the waiting
  // thread, and may throw: a holder that died inside its section leaves the
  // stripe held, and the owner can often name the real cause (a trainer sees
  // its connection to the dead server close) long before kStuckAfterS.
  void check_while_waiting(std::function<void()> check) { check_while_waiting_ = std::move(check); }

 private:
  static_assert(std::atomic<uint32_t>::is_always_lock_free, "process-shared locks need lock-free atomics");
  std::atomic<uint32_t>* stripes_ = nullptr;
  int stuck_after_s_ = kStuckAfterS;
  std::function<void()> check_while_waiting_;
};

class RowGuard {
 public:
  RowGuard(RowLocks& locks, size_t stripe) : locks_(locks), stripe_(stripe) { locks_.lock(stripe_); }
  ~RowGuard() { locks_.unlock(stripe_); }
  RowGuard(const RowGuard&) = delete;
  RowGuard& operator=(const RowGuard&) = delete;

 private:
  RowLocks& locks_;
  size_t stripe_;
};

}  // namespace tessera::store
