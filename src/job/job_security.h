// The security settings of a job's process, from its JobEnv.
#pragma once

#include "net/security.h"
#include "tessera/job/job_env.h"

namespace tessera::job {

// Reads the key file TESSERA_KEY_FILE named (errors name the file).
net::Security job_security(const JobEnv& env);

}  // namespace tessera::job
