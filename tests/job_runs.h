// Running a launched job to its end, or killing one of its processes part-way (SIGKILL, as a machine failure
// would), and timing it: what the restart tests, on loopback and on the simulated cluster, share.
#pragma once

#include <functional>
#include <string>

namespace tessera::testing {

// A job's launcher log (stdout and stderr), exit code and wall time.
struct JobRun {
  std::string log;
  int code = -1;
  double seconds = 0;
};

// Runs `job_command` to the end.
JobRun run_job(const std::string& job_command);

// Runs `job_command` with its output in `log`, and once `ready(log text)`
// holds (`what` describes it; 120 s at most) SIGKILLs the tessera process of
// `role` on `machine`; then waits for the job to end (300 s at most).
JobRun run_job_killing(const std::string& job_command, const std::string& log, const std::string& what,
                       const std::function<bool(const std::string&)>& ready, const std::string& role, int machine);

// The same once `marker` shows in the log.
JobRun run_job_killing_at(const std::string& job_command, const std::string& log, const std::string& marker,
                          const std::string& role, int machine);

}  // namespace tessera::testing
