// The job environment: what the launcher tells each process it starts, in TESSERA_* environment variables. The
// same program runs as a server or a trainer by TESSERA_ROLE (server | trainer); without it, it runs standalone.
// The others: JOB_ID (names shared memory and logs), MACHINE_ID (line of ip_config, never derived from the
// address), NUM_MACHINES, SERVER_ID / TRAINER_ID (index on its machine), NUM_SERVERS (per machine),
// NUM_TRAINERS (on this machine), TRAINERS_PER_MACHINE ("0,2,...", set only when counts differ),
// NUM_SERVER_MACHINES (machines 0..N-1 hold partitions and run servers, the rest only trainers; unset: all),
// NUM_SAMPLERS, IP_CONFIG, PART_CONFIG, MASTER_ADDR / MASTER_PORT (the rendezvous store on machine 0) and
// TIMEOUT_S (seconds to wait for peers, default 60), KEY_FILE (the job's keys, mode 0600; never the keys themselves)
// and INSECURE (1: authenticate but do not encrypt). Without TESSERA_ROLE, a process started by Slurm's srun or
// by mpirun takes its place from the manager's variables when TESSERA_IP_CONFIG is set: machine = node, and
// each node's first TESSERA_NUM_SERVERS (default 1) local ranks are servers, the rest trainers.
//
// A JobEnv is a plain value that owns its strings; reading it from several threads is safe. from_environment()
// only reads the environment (call it before threads change it). Errors are tessera::Error naming the variable
// and the value expected: a required one unset, a number out of range, counts that disagree with each other.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera::job {

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
  std::string key_file;  // the job's keys (net/security.h); required by servers and trainers
  bool insecure = false;  // PLAIN instead of CURVE: authenticated, not encrypted

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

// Which start of the job this is: 0 the first, k after the launcher's k-th
// restart (TESSERA_RESTART, `tessera launch --max-restarts`). Trainers that
// keep checkpoints resume from them when it is not 0.
int launcher_restart();

// Reads TESSERA_KEY_FILE (required) and TESSERA_INSECURE into `env`.
void read_security_variables(JobEnv* env);

}  // namespace tessera::job
