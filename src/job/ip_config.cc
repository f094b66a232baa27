#include "tessera/job/ip_config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "io/text.h"
#include "tessera/base/error.h"

namespace tessera::job {
namespace {

// RFC 1123 host names: letters, digits, '-' and '.', not starting with '-'
// (which ssh would take for an option).
bool valid_host_name(const std::string& name) {
  return !name.empty() && name.size() <= 253 && name[0] != '-' &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'; });
}

std::string resolve_ipv4(const std::string& host, const std::string& where) {
  in_addr parsed{};
  if (::inet_pton(AF_INET, host.c_str(), &parsed) == 1) return host;
  if (std::all_of(host.begin(), host.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }))
    fail("{}: '{}' is not an IPv4 address", where, host);
  if (!valid_host_name(host)) fail("{}: '{}' is neither an IPv4 address nor a host name", where, host);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr)
    fail("{}: cannot resolve host name '{}' to an IPv4 address: {}", where, host, ::gai_strerror(rc));
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof(text));
  ::freeaddrinfo(found);
  return text;
}

}  // namespace

std::vector<MachineAddress> read_ip_config(const std::string& path, int num_servers) {
  std::vector<MachineAddress> machines;
  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(&line)) {
    const std::string_view text = trim(line.substr(0, std::min(line.find('#'), line.size())));
    if (text.empty()) continue;
    split_fields(text, " \t", true, &fields);
    MachineAddress m;
    if (fields.size() > 1 && (fields.back() == "client" || fields.back() == "server")) {
      m.client = fields.back() == "client";
      fields.pop_back();
    }
    if (fields.size() > 3)
      fail("{}: expected 'HOST [base_port [num_servers]] [server|client]', found {} fields", reader.where(),
           fields.size());
    m.host = std::string(fields[0]);
    m.line = static_cast<int>(reader.line_number());
    m.ip = resolve_ipv4(m.host, reader.where());
    if (fields.size() >= 2) {
      const int64_t port = parse_int(fields[1], reader.where(), "base_port");
      if (port < 1024 || port > 65000) fail("{}: base port {} is outside 1024..65000", reader.where(), port);
      m.base_port = static_cast<int>(port);
    }
    if (fields.size() == 3) {
      const int64_t n = parse_int(fields[2], reader.where(), "num_servers");
      if (n < 1 || n > 64) fail("{}: num_servers {} is outside 1..64", reader.where(), n);
      m.num_servers = static_cast<int>(n);
      if (m.client) fail("{}: a client machine runs no servers; drop its num_servers", reader.where());
    }
    machines.push_back(m);
  }
  if (machines.empty()) fail("{}: no machines listed (expected lines 'HOST [base_port]')", path);
  count_server_machines(machines, path);

  // Machines on one IP need disjoint port ranges [B, B + 1 + num_servers);
  // client machines listen on none.
  std::map<std::string, std::vector<const MachineAddress*>> by_ip;
  for (const auto& m : machines)
    if (!m.client) by_ip[m.ip].push_back(&m);
  for (const auto& [ip, group] : by_ip)
    for (size_t i = 0; i < group.size(); ++i)
      for (size_t j = i + 1; j < group.size(); ++j) {
        const MachineAddress& a = *group[i];
        const MachineAddress& b = *group[j];
        const int span_a = 1 + (a.num_servers > 0 ? a.num_servers : num_servers);
        const int span_b = 1 + (b.num_servers > 0 ? b.num_servers : num_servers);
        if (a.base_port < b.base_port + span_b && b.base_port < a.base_port + span_a)
          fail("{}:{}: ports {}..{} on {} overlap line {}'s {}..{} "
               "(each machine needs base_port .. base_port+num_servers)",
               path, b.line, b.base_port, b.base_port + span_b - 1, ip, a.line, a.base_port,
               a.base_port + span_a - 1);
      }
  return machines;
}

int count_server_machines(const std::vector<MachineAddress>& machines, const std::string& source) {
  int servers = 0;
  bool client_seen = false;
  for (const MachineAddress& m : machines) {
    client_seen |= m.client;
    if (!m.client && client_seen)
      fail("{}: server machine {} (ip_config line {}) comes after a client machine; list the server machines "
           "first (machine i serves partition i)",
           source, m.host, m.line);
    servers += m.client ? 0 : 1;
  }
  if (servers == 0) fail("{}: every machine is a client; at least one must hold a partition", source);
  return servers;
}

bool is_local_address(const std::string& ip) {
  in_addr wanted{};
  if (::inet_pton(AF_INET, ip.c_str(), &wanted) != 1) return false;
  if ((ntohl(wanted.s_addr) >> 24) == 127) return true;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* it = list; it != nullptr && !found; it = it->ifa_next)
    if (it->ifa_addr != nullptr && it->ifa_addr->sa_family == AF_INET)
      found = reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr.s_addr == wanted.s_addr;
  ::freeifaddrs(list);
  return found;
}

}  // namespace tessera::job
