// Wall-clock phase timing and peak-RSS reading for progress logs and benchmarks.
#pragma once

#include <chrono>
#include <cstdint>

namespace tessera {

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void reset() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Peak resident set size of this process, in bytes (VmHWM).
int64_t peak_rss_bytes();

}  // namespace tessera
