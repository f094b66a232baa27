// The job environment: what the launcher tells each process it starts, in
// TESSERA_* environment variables. The same program runs as a server or a
// trainer depending on TESSERA_ROLE; without it, a program runs standalone.
//
//   TESSERA_ROLE          server | trainer
//   TESSERA_JOB_ID        unique per launch; names shared memory and logs
//   TESSERA_MACHINE_ID    this process's machine (line of ip_config), never
//                         derived from the host's address
//   TESSERA_NUM_MACHINES
//   TESSERA_SERVER_ID     server index on its machine (servers only)
//   TESSERA_TRAINER_ID    trainer index on its machine (trainers only)
//   TESSERA_NUM_SERVERS   servers per machine
//   TESSERA_NUM_TRAINERS  trainers on this machine
//   TESSERA_TRAINERS_PER_MACHINE  "0,2,...": every machine's count, set
//                         only when they differ (launch --num-trainers 2,1)
//   TESSERA_NUM_SERVER_MACHINES  machines 0..N-1 hold partitions 0..N-1 and
//                         run servers; the rest are clients that run only
//                         trainers (server-client mode). Unset: every machine.
//   TESSERA_NUM_SAMPLERS  sampler threads per trainer
//   TESSERA_IP_CONFIG     path of the ip_config file
//   TESSERA_PART_CONFIG   path of the partition config (<graph>.json)
//   TESSERA_MASTER_ADDR   rendezvous store address (machine 0)
//   TESSERA_MASTER_PORT   rendezvous store port (machine 0's base port)
//   TESSERA_TIMEOUT_S     seconds to wait for peers to appear (default 60)
//
// Without TESSERA_ROLE, a process started by a cluster manager (Slurm's
// srun, Open MPI's or MPICH's mpirun) instead of `tessera launch` takes its
// place from the manager's variables when TESSERA_IP_CONFIG is set
// (cluster_manager_env.cc): machine = node, and on each node the first
// TESSERA_NUM_SERVERS (default 1) local ranks are servers, the rest trainers.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera::dist {

enum class Role { kStandalone, kServer, kTrainer };

struct JobEnv {
  Role role = Role::kStandalone;
  std::string job_id;
  int machine_id = 0;
  int num_machines = 1;
  int server_id = 0;
  int trainer_id = 0;
  int num_servers = 1;
  int num_trainers = 1;  // on this machine (0 on a server-only machine)
  // Every machine's trainer count when they differ; empty: num_trainers
  // on every machine.
  std::vector<int> trainers_per_machine;
  // Machines holding partitions (0: all of them); the others are clients.
  int num_server_machines = 0;
  int num_samplers = 0;
  std::string ip_config;
  std::string part_config;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  int timeout_s = 60;

  // Global trainer rank: trainers are numbered machine-major.
  int rank() const;
  int world_size() const;
  int trainers_on(int machine) const;
  int server_machines() const { return num_server_machines > 0 ? num_server_machines : num_machines; }
  bool holds_partition(int machine) const { return machine < server_machines(); }
  // Whether node_split can keep each trainer on its own machine's IDs: every
  // trainer's machine holds a partition, and every partition has a trainer.
  bool trainers_cover_partitions() const;
  // "m0/server/1", "m1/trainer/0": how logs and errors name a process.
  std::string label() const;

  // Reads TESSERA_* (or a cluster manager's variables, see above); errors
  // name the variable and the value expected.
  static JobEnv from_environment();
  // NAME=value pairs for a child process (the launcher's side).
  std::vector<std::pair<std::string, std::string>> to_environment() const;
};

std::string role_name(Role role);

// The job environment of a process started by srun / mpirun, or role
// kStandalone when none of their variables (or no TESSERA_IP_CONFIG) is set.
JobEnv job_env_from_cluster_manager();

}  // namespace tessera::dist
