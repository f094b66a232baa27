// What the launcher asks of remote hosts over ssh besides running the job:
// the check before it and the sweep after it. One ssh per host, all at once,
// so a dead host costs one connect timeout, not one per process.
#pragma once

#include <string>
#include <vector>

#include "launch/launch.h"

namespace tessera::launch {

struct RemoteHost {
  std::string host;
  std::string where;  // "ip_config:line", for errors
  SshOptions ssh;
  std::string workspace;
  // Files the job's processes read there (absolute or relative to the
  // workspace), and ports the job will listen on, each with its use.
  std::vector<std::string> files;
  std::vector<std::pair<int, std::string>> ports;
  // A job file's generated ip_config, written to `ip_config_path` there
  // before the checks; empty: the ip_config is expected in place.
  std::string ip_config_text, ip_config_path;
};

// Before a job starts anything: every remote host answers and has the
// workspace, the files the job's processes read there, the program the
// command runs, and its ports free (when it has `ss`, from iproute2). Throws tessera::Error naming the first host that fails (in
// ip_config order).
void check_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& command);

// After a job: on every remote host, kills any process still carrying the
// job's id in its environment and removes the job's shared memory. Needed
// when a host's processes were killed outright (their wrapper with them) and
// nothing there could clean up. Returns the hosts it could not reach, for
// the launcher to report; never throws for a host.
std::vector<std::string> sweep_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& job_id);

// The program a command line runs: its first word after NAME=value
// assignments, or "" when the line starts with something a check cannot
// follow (a subshell, a quote, a variable).
std::string command_program(const std::string& command);

}  // namespace tessera::launch
