#include "server/server_state.h"

#include <sys/mman.h>

#include <algorithm>

#include "job/tensor_registry.h"
#include "tessera/base/error.h"

namespace tessera::server {

net::ServiceRegistry<ServerState>& partition_services() {
  static net::ServiceRegistry<ServerState> registry;
  return registry;
}

OwnedSegments::~OwnedSegments() {
  for (const std::string& name : names) ::shm_unlink(name.c_str());
}

void OwnedSegments::forget(const std::string& name) { names.erase(std::remove(names.begin(), names.end(), name), names.end()); }

ServerState::ServerState(const job::JobEnv& job_env)
    : env(job_env), who("server " + job_env.label()), config(PartitionConfig::load(job_env.part_config)), book(config) {}

store::LocalTensor& ServerState::tensor(const std::string& name) {
  store::LocalTensor* t = job::resolve_tensor(*partition, rendezvous.get(), env.machine_id, name);
  if (t == nullptr) fail("partition {} has no tensor named '{}'", env.machine_id, name);
  return *t;
}

}  // namespace tessera::server
