// How the launcher starts one process of a job. A spawner hides where the
// process runs: the local one forks and execs /bin/sh; the ssh one runs
// `ssh host <wrapper>` as the local process instead, the wrapper starting the
// command on the host (ssh_spawner.cc). Either way the launcher gets a local
// pid that leads its own process group, and pipes carrying the process's
// stdout and stderr.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "launch/launch.h"

namespace tessera::launch {

struct ProcessSpec {
  std::string host;     // the machine's host name or IP from the ip_config
  bool remote = false;  // not this host: started over ssh
  std::string workdir;
  std::string command;  // for /bin/sh -c
  // Set on top of the launcher's environment (replacing same-named ones).
  std::vector<std::pair<std::string, std::string>> env;
  // Inherited variables to drop first (stale TESSERA_* of an outer job).
  std::vector<std::string> unset;
  // Give the process a pipe as stdin (SpawnedProcess::stdin_fd) instead of
  // /dev/null: the ssh spawner's way to tell a remote wrapper to stop.
  bool stdin_pipe = false;
};

struct SpawnedProcess {
  pid_t pid = -1;  // also the process group id
  int out_fd = -1;  // read ends, non-blocking, close-on-exec
  int err_fd = -1;
  // Write end of the process's stdin when the spec asked for a pipe, else -1.
  // Closing it stops a remote process: its wrapper kills the command's
  // process group on the host, removes the job's shared memory, and exits.
  int stdin_fd = -1;
};

class Spawner {
 public:
  virtual ~Spawner() = default;
  // Starts the process; throws tessera::Error when it cannot be started.
  virtual SpawnedProcess spawn(const ProcessSpec& spec) = 0;
};

// fork + exec on this host. The child leads its own process group (so that
// killing the group takes whatever the shell started) and gets SIGKILL when
// the launcher dies (so a killed launcher leaves no orphans).
std::unique_ptr<Spawner> make_local_spawner();

// Starts specs with `remote` set over ssh (through `local`, which must outlive
// it) and the others with `local` directly; `ssh` says how to reach each
// remote host; `key_text` (the job's key file) goes to each remote
// process's stdin first.
std::unique_ptr<Spawner> make_host_spawner(Spawner& local, std::map<std::string, SshOptions> ssh,
                                           const std::string& job_id, const std::string& key_text);

}  // namespace tessera::launch
