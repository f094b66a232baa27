// Wall-clock phase timing and peak-RSS reading for progress logs and benchmarks.
//
// A Timer is a small value (a steady_clock start time) with no locks: one Timer belongs to one thread, and
// lap() and reset() change it. peak_rss_bytes() reads getrusage for the whole process; host_cpu() reads
// /proc/stat and returns zeros when it cannot. Both are safe from any thread, and nothing here throws.
// HostCpu readings are values; compare two with busy_since().
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
  // Seconds since the start or the previous lap, and restarts: one timer
  // splits a sequence of phases.
  double lap() {
    const double s = seconds();
    reset();
    return s;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// CPU seconds the calling thread has run since the start or reset (its
// OpenMP workers not counted): what a phase cost, where a Timer also counts
// the time other processes had the core.
class ThreadCpuTimer {
 public:
  ThreadCpuTimer() : start_(now()) {}
  double seconds() const { return now() - start_; }
  void reset() { start_ = now(); }

 private:
  static double now();
  double start_;
};

// Peak resident set size of this process, in bytes (VmHWM).
int64_t peak_rss_bytes();

// The host's CPU time counters (/proc/stat, all cores): how busy the whole
// machine was between two readings. On a test host that runs every
// "machine" of a job, that is the job's CPU use plus whatever else runs.
struct HostCpu {
  uint64_t busy = 0, total = 0;  // clock ticks
  // Fraction of all cores' time that was busy since `earlier` (0 if none passed).
  double busy_since(const HostCpu& earlier) const;
};
HostCpu host_cpu();

}  // namespace tessera
