// Moved: the ip_config file's reader is tessera/job/ip_config.h, namespace
// tessera::job. These aliases keep programs written against
// tessera::distributed building for one release (0.3), with a deprecation
// warning naming the new spelling.
#pragma once

#include "tessera/job/ip_config.h"

namespace tessera::distributed {

[[deprecated("tessera::job::kDefaultBasePort")]] constexpr int kDefaultBasePort = job::kDefaultBasePort;
using MachineAddress [[deprecated("tessera::job::MachineAddress (tessera/job/ip_config.h)")]] = job::MachineAddress;

[[deprecated("tessera::job::read_ip_config")]] inline std::vector<job::MachineAddress> read_ip_config(
    const std::string& path, int num_servers) {
  return job::read_ip_config(path, num_servers);
}
[[deprecated("tessera::job::count_server_machines")]] inline int count_server_machines(
    const std::vector<job::MachineAddress>& machines, const std::string& source) {
  return job::count_server_machines(machines, source);
}
[[deprecated("tessera::job::is_local_address")]] inline bool is_local_address(const std::string& ip) {
  return job::is_local_address(ip);
}

}  // namespace tessera::distributed
