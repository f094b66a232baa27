#include "host_roles.h"

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

bool names_machine(const std::string& entry, const job::MachineAddress& m) {
  for (const std::string& name : {m.host, m.ip})
    if (entry == name || entry == fmt::format("{}:{}", name, m.base_port)) return true;
  return false;
}

// Per machine: whether some entry of `list` names it. Every entry must name one.
std::vector<bool> named_by(const std::vector<std::string>& list, const std::vector<job::MachineAddress>& machines,
                           const char* flag, const std::string& ip_config) {
  std::vector<bool> named(machines.size(), false);
  for (const std::string& entry : list) {
    bool found = false;
    for (size_t m = 0; m < machines.size(); ++m)
      if (names_machine(entry, machines[m])) named[m] = found = true;
    if (!found) fail("{}: '{}' is not a machine of {} (give HOST or HOST:BASE_PORT as written there)", flag, entry, ip_config);
  }
  return named;
}

}  // namespace

int apply_host_roles(std::vector<job::MachineAddress>* machines, const std::vector<std::string>& server_hosts,
                     const std::vector<std::string>& client_hosts, const std::string& ip_config) {
  if (server_hosts.empty() && client_hosts.empty()) return job::count_server_machines(*machines, ip_config);
  const std::vector<bool> servers = named_by(server_hosts, *machines, "--server-hosts", ip_config);
  const std::vector<bool> clients = named_by(client_hosts, *machines, "--client-hosts", ip_config);
  for (size_t m = 0; m < machines->size(); ++m) {
    job::MachineAddress& machine = (*machines)[m];
    const std::string where = fmt::format("{}:{}", ip_config, machine.line);
    if (servers[m] && clients[m])
      fail("{}: machine {} ({}) is named by both --server-hosts and --client-hosts", where, m, machine.host);
    if (!server_hosts.empty() && !client_hosts.empty() && !servers[m] && !clients[m])
      fail("{}: machine {} ({}) is named by neither --server-hosts nor --client-hosts", where, m, machine.host);
    machine.client = client_hosts.empty() ? !servers[m] : clients[m];
  }
  return job::count_server_machines(*machines, "--server-hosts/--client-hosts");
}

}  // namespace tessera::launch
