// Moved: the job environment is tessera/job/job_env.h, namespace tessera::job.
// These aliases keep programs written against tessera::distributed building
// for one release (0.3), with a deprecation warning naming the new spelling.
#pragma once

#include "tessera/job/job_env.h"

namespace tessera::distributed {

using Role [[deprecated("tessera::job::Role (tessera/job/job_env.h)")]] = job::Role;
using JobEnv [[deprecated("tessera::job::JobEnv (tessera/job/job_env.h)")]] = job::JobEnv;

[[deprecated("tessera::job::role_name")]] inline std::string role_name(job::Role role) { return job::role_name(role); }
[[deprecated("tessera::job::job_env_from_cluster_manager")]] inline job::JobEnv job_env_from_cluster_manager() {
  return job::job_env_from_cluster_manager();
}
[[deprecated("tessera::job::launcher_restart")]] inline int launcher_restart() { return job::launcher_restart(); }
[[deprecated("tessera::job::read_security_variables")]] inline void read_security_variables(job::JobEnv* env) {
  job::read_security_variables(env);
}

}  // namespace tessera::distributed
