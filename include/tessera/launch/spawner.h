// How the launcher starts one process of a job. A spawner hides where the
// process runs: the local one forks and execs /bin/sh; an ssh one would run
// `ssh host 'cd ws && env ... sh -c cmd'` as the local process instead. Either
// way the launcher gets a local pid that leads its own process group, and
// pipes carrying the process's stdout and stderr.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera::launch {

struct ProcessSpec {
  std::string host;  // the machine's IP from the ip_config
  std::string workdir;
  std::string command;  // for /bin/sh -c
  // Set on top of the launcher's environment (replacing same-named ones).
  std::vector<std::pair<std::string, std::string>> env;
  // Inherited variables to drop first (stale TESSERA_* of an outer job).
  std::vector<std::string> unset;
};

struct SpawnedProcess {
  pid_t pid = -1;  // also the process group id
  int out_fd = -1;  // read ends, non-blocking, close-on-exec
  int err_fd = -1;
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

}  // namespace tessera::launch
