// The security settings of a job's process, from its JobEnv.
#pragma once

#include "net/security.h"
#include "tessera/distributed/job_env.h"

namespace tessera::distributed {

// Reads the key file TESSERA_KEY_FILE named (errors name the file).
net::Security job_security(const JobEnv& env);

}  // namespace tessera::distributed
