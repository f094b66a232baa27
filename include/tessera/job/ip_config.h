// The ip_config file: one line per machine, `HOST [base_port [num_servers]] [server|client]` (DGL's
// `IP [port]`, DGL-KE's `IP port num_servers`), HOST an IPv4 address or a host name, resolved once here (ssh
// gets the name as written). Blank lines and '#' comments (whole-line or trailing) are skipped. Client machines
// hold no partition and run only trainers (server-client mode); server machines come first, so that machine i
// serves partition i.
// Machine m's ports derive from its base port B: B is the rendezvous store (machine 0 only), B + 1 + s is
// server s's ZeroMQ socket. Machines may share an IP (tests, multi-socket hosts) if their port ranges do not
// overlap.
//
// The functions hold no state and return values the caller owns; they may be called from any thread.
// Errors are tessera::Error naming the file and line: a malformed line, a port or server count out of range,
// a host that does not resolve, overlapping ports, or a server machine after a client one.
#pragma once

#include <string>
#include <vector>

namespace tessera::job {

constexpr int kDefaultBasePort = 30050;

struct MachineAddress {
  std::string host;  // as written: what ssh connects to
  std::string ip;    // IPv4 address of host: what sockets bind and connect to
  int base_port = kDefaultBasePort;
  int num_servers = -1;  // from the DGL-KE form, or -1 when not given
  int line = 0;          // line in the file, for error messages
  bool client = false;   // runs trainers only (server-client mode)

  int store_port() const { return base_port; }
  int server_port(int server_id) const { return base_port + 1 + server_id; }
};

// Reads and checks the file (IPs, port ranges, overlaps of machines that share
// an IP for `num_servers` servers each). Errors name the file and line.
std::vector<MachineAddress> read_ip_config(const std::string& path, int num_servers);

// How many machines, from the first, hold partitions: the server machines.
// Fails unless they all come before the client machines. `source` names
// where the roles came from, for the message.
int count_server_machines(const std::vector<MachineAddress>& machines, const std::string& source);

// Whether `ip` names this host (loopback or one of its interfaces).
bool is_local_address(const std::string& ip);

}  // namespace tessera::job
