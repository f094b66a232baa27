// The launcher's record of a job, `<workspace>/<run dir>/launch.json`: the
// command, the machines, and how each process went (host, role, start time,
// duration, exit code, peak memory), for `tessera report` (run_data.h reads
// it back). The launcher fills it; this part owns the file's format.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/job/job_env.h"

namespace tessera::run {

// How a process of the job went.
struct ProcessOutcome {
  std::string label;
  job::Role role = job::Role::kTrainer;
  std::string host;
  bool remote = false;
  double start_s = 0;     // Unix time it was started
  double duration_s = 0;  // until it was reaped
  int exit_code = -1;     // 128 + signal when a signal ended it; -1: never reaped
  bool stopped = false;   // ended by the launcher's stop, not by itself
  // Peak resident set of the process and everything it waited for (wait4's
  // rusage; the shell and what it ran). -1 for a remote process, whose local
  // pid is its ssh client.
  int64_t peak_rss_bytes = -1;
};

struct MachineRecord {
  std::string host, ip;
  int base_port = 0;
  bool local = false;   // an address of the launcher's host
  bool client = false;  // runs trainers only (server-client mode)
};

struct LaunchRecord {
  std::string job_id, command, workspace, ip_config, part_config;
  int num_servers = 1;
  std::vector<int> trainers_per_machine;
  std::vector<MachineRecord> machines;
  double start_s = 0;  // Unix time
  int exit_code = 0;
  std::vector<ProcessOutcome> processes;  // the last attempt's
  // Attempts that failed before a restart (--max-restarts): exit code, processes.
  std::vector<std::pair<int, std::vector<ProcessOutcome>>> failed_attempts;
};

// Writes `record` to `path` (a temp name, then renamed), ending now; creates
// its folder. Throws tessera::Error naming the file when it cannot.
void write_launch_record(const std::string& path, const LaunchRecord& record);

}  // namespace tessera::run
