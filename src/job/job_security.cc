#include "job/job_security.h"

namespace tessera::job {

net::Security job_security(const JobEnv& env) {
  net::Security security;
  security.keys = net::read_key_file(env.key_file);
  security.encrypt = !env.insecure;
  return security;
}

}  // namespace tessera::job
