// A partition server: serves one machine's partition until a trainer sends
// shutdown. The main server (server 0) maps the partition, creates tensors in
// shared memory and, on machine 0, hosts the rendezvous store; backup servers
// map the same files and segments and share the request load.
#pragma once

#include "tessera/distributed/job_env.h"

namespace tessera::distributed {

// Returns the process exit code (0 after a clean shutdown).
int run_server(const JobEnv& env);

}  // namespace tessera::distributed
