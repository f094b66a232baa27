// What a launch will run, decided and checked before anything starts: the
// machines, the processes with their environments, and the ports they need.
#pragma once

#include <string>
#include <vector>

#include "remote_hosts.h"
#include "supervisor.h"
#include "tessera/job/ip_config.h"
#include "launch/launch.h"
#include "net/security.h"

namespace tessera::launch {

struct JobPlan {
  std::string job_id;
  // The job's keys (net/security.h): written by the launcher to key_file for
  // this host's processes; remote hosts get them over ssh's stdin.
  net::JobKeys keys;
  std::string key_file;
  std::string workspace;    // absolute; the launcher's
  std::vector<std::string> workspaces;  // by machine, absolute
  std::string ip_config;    // absolute
  std::string part_config;  // as given: relative to each machine's workspace
  std::vector<job::MachineAddress> machines;
  std::vector<bool> machine_is_local;   // by machine: an address of this host
  std::vector<RemoteHost> remote_hosts;  // machines not on this host, each host once
  int num_servers = 1;  // per machine holding a partition
  int num_server_machines = 1;  // machines 0..n-1 hold partitions; the rest are clients
  std::vector<int> trainers_per_machine;
  std::vector<SupervisedProcess> processes;  // every machine's servers, then every machine's trainers
  int master_port = 0;  // the rendezvous store's, on machine 0
};

// Reads and checks the ip_config, the partition config, the flags and the
// ports. Fails (tessera::Error) on the first problem; starts nothing.
JobPlan plan_job(const LaunchOptions& options);

// Fails (tessera::Error naming the port, the ip_config line and its use)
// when a port the job listens on here is taken: before the first start, and
// before each restart.
void check_local_ports(const JobPlan& plan);

// Absolute path of the partition config on a machine.
std::string machine_part_config(const JobPlan& plan, size_t machine);

// Where the launcher writes the job's key file for this host's processes;
// a remote host's wrapper writes its own at this path plus ".<its pid>".
std::string local_key_file(const std::string& job_id);

// Letters, digits and '-' only, unique per launch: "j<pid>-<6 hex digits>".
std::string new_job_id();

}  // namespace tessera::launch
