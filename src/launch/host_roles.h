// Server-client mode: which machines of an ip_config hold partitions and run
// servers, and which are clients that run only trainers. Roles come from the
// ip_config (a trailing `client`), or from --server-hosts / --client-hosts.
#pragma once

#include <string>
#include <vector>

#include "tessera/job/ip_config.h"

namespace tessera::launch {

// Applies --server-hosts / --client-hosts (either may be empty) to the
// machines of `ip_config`, and returns how many machines hold partitions.
// An entry names every machine on a host (as written in the ip_config, or
// its address), or one machine as HOST:BASE_PORT. With one list given, the
// other machines take the other role; with both, every machine is named
// once. Server machines must come first: machine i serves partition i.
int apply_host_roles(std::vector<job::MachineAddress>* machines, const std::vector<std::string>& server_hosts,
                     const std::vector<std::string>& client_hosts, const std::string& ip_config);

}  // namespace tessera::launch
