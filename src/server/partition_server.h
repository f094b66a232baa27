// A partition server: serves one machine's partition until a trainer sends
// shutdown. The main server (server 0) maps the partition, creates tensors in
// shared memory and, on machine 0, hosts the rendezvous store; backup servers
// map the same files and segments and share the request load. What it
// answers is whatever the library's parts registered (server_state.h).
#pragma once

#include "net/message.h"
#include "tessera/job/job_env.h"

namespace tessera::server {

// Frames: none. The server replies, then stops serving.
constexpr net::RequestType kShutdown = 9;

// Returns the process exit code (0 after a clean shutdown).
int run_server(const job::JobEnv& env);

}  // namespace tessera::server
