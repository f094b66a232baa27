// What the launcher asks of remote hosts over ssh besides running the job:
// the check before it and the sweep after it. One ssh per host, all at once,
// so a dead host costs one connect timeout, not one per process.
#pragma once

#include <string>
#include <vector>

#include "tessera/launch/launch.h"

namespace tessera::launch {

struct RemoteHost {
  std::string host;
  std::string where;  // "ip_config:line", for errors
  // Ports the job will listen on there, each with what it is for.
  std::vector<std::pair<int, std::string>> ports;
};

// Before a job starts anything: every remote host answers and has the
// workspace, the files the job's processes read there, the program the
// command runs, and its ports free (when it has `ss`, from iproute2). Throws tessera::Error naming the first host that fails (in
// ip_config order). `files` are absolute or relative to `workspace`.
void check_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& workspace,
                        const std::vector<std::string>& files, const std::string& command, const SshOptions& ssh);

// After a job: on every remote host, kills any process still carrying the
// job's id in its environment and removes the job's shared memory. Needed
// when a host's processes were killed outright (their wrapper with them) and
// nothing there could clean up. Returns the hosts it could not reach, for
// the launcher to report; never throws for a host.
std::vector<std::string> sweep_remote_hosts(const std::vector<RemoteHost>& hosts, const std::string& job_id,
                                            const SshOptions& ssh);

// The program a command line runs: its first word after NAME=value
// assignments, or "" when the line starts with something a check cannot
// follow (a subshell, a quote, a variable).
std::string command_program(const std::string& command);

}  // namespace tessera::launch
