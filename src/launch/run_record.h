// The launcher's record of a job, `<workspace>/<run dir>/launch.json`: the
// command, the machines, and how each process went (host, role, start time,
// duration, exit code, peak memory), for `tessera report`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "job_plan.h"
#include "supervisor.h"

namespace tessera::launch {

struct LaunchRecord {
  const JobPlan& plan;
  const LaunchOptions& options;
  double start_s = 0;  // Unix time
  int exit_code = 0;
  std::vector<ProcessOutcome> processes;  // the last attempt's
  // Attempts that failed before a restart (--max-restarts): exit code, processes.
  std::vector<std::pair<int, std::vector<ProcessOutcome>>> failed_attempts;
};

// The record's path: the run dir taken relative to the launcher's workspace.
std::string launch_record_path(const JobPlan& plan, const LaunchOptions& options);

// Writes the record (a temp name, then renamed); creates the run dir.
// Throws tessera::Error naming the file when it cannot.
void write_launch_record(const LaunchRecord& record);

}  // namespace tessera::launch
