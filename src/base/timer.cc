#include "tessera/base/timer.h"

#include <sys/resource.h>
#include <time.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tessera {

double ThreadCpuTimer::now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

HostCpu host_cpu() {
  // First line: "cpu user nice system idle iowait irq softirq steal ...".
  std::ifstream in("/proc/stat");
  std::string line, label;
  HostCpu cpu;
  if (!std::getline(in, line)) return cpu;
  std::istringstream fields(line);
  fields >> label;
  uint64_t value = 0;
  for (int i = 0; fields >> value; ++i) {
    if (i >= 8) break;  // guest time is already counted in user
    cpu.total += value;
    if (i != 3 && i != 4) cpu.busy += value;  // idle and iowait are not busy
  }
  return cpu;
}

double HostCpu::busy_since(const HostCpu& earlier) const {
  const uint64_t total_ticks = total - earlier.total;
  return total_ticks == 0 ? 0.0 : static_cast<double>(busy - earlier.busy) / static_cast<double>(total_ticks);
}

}  // namespace tessera
