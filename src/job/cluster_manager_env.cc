// A job started by a cluster manager rather than `tessera launch`: srun or
// mpirun starts every process on every node, and each one works out its
// place from the manager's variables. The mapping never looks at host names
// or addresses (DistDGL's trap): node index = machine = ip_config line.
//
//   manager      rank / size                          local rank / size                          node
//   Slurm        SLURM_PROCID / SLURM_NTASKS          SLURM_LOCALID / NTASKS / NNODES            SLURM_NODEID
//   Open MPI     OMPI_COMM_WORLD_RANK / _SIZE         OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE   rank / local size
//   MPICH (PMI)  PMI_RANK / PMI_SIZE                  MPI_LOCALRANKID / MPI_LOCALNRANKS          rank / local size
//
// The user exports TESSERA_IP_CONFIG and TESSERA_PART_CONFIG (and may set
// TESSERA_NUM_SERVERS, TESSERA_NUM_SAMPLERS, TESSERA_JOB_ID,
// TESSERA_MASTER_PORT, TESSERA_TIMEOUT_S); every node runs the same number
// of processes. Nodes whose ip_config line ends in `client` hold no
// partition: all their processes are trainers (server-client mode).
#include <cctype>
#include <cstdlib>
#include <optional>

#include "tessera/job/ip_config.h"
#include "tessera/job/job_env.h"
#include "base/env.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace tessera::job {
namespace {

struct Placement {
  std::string manager;  // for messages
  int rank = 0, size = 1, local_rank = 0, local_size = 1, node = 0, nodes = 1;
  std::string job;  // the manager's job id, "" when it has none
};

int get_int(const char* name, const std::string& manager) {
  const char* value = env_value(name);
  if (value == nullptr) fail("{} started this process but {} is not set", manager, name);
  const int64_t n = parse_int(value, std::string("environment variable ") + name, "value");
  if (n < 0 || n > (1 << 24)) fail("environment variable {}={} is out of range", name, value);
  return static_cast<int>(n);
}

// Node = rank / local size, valid when ranks fill nodes in blocks (mpirun's
// default mapping by slot, or --map-by ppr:N:node).
void node_from_blocks(Placement* p) {
  if (p->local_size <= 0 || p->size % p->local_size != 0)
    fail("{}: {} ranks cannot be split into nodes of {} each; run the same number of processes on every node",
         p->manager, p->size, p->local_size);
  p->node = p->rank / p->local_size;
  p->nodes = p->size / p->local_size;
  if (p->rank % p->local_size != p->local_rank)
    fail("{}: rank {} has local rank {}; ranks must fill the nodes in blocks (mpirun --map-by ppr:{}:node)",
         p->manager, p->rank, p->local_rank, p->local_size);
}

// Managers that give only a rank and a local rank: the node follows from
// blocks (node_from_blocks).
struct BlockManager {
  const char* name;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
  const char* job;         // variable naming the job, if any
  const char* job_prefix;  // keeps ids of different managers apart
};
constexpr BlockManager kBlockManagers[] = {
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_NAMESPACE", "ompi-"},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_KVSNAME", "pmi-"},
};

std::optional<Placement> detect() {
  if (env_value("SLURM_PROCID") != nullptr && env_value("SLURM_NODEID") != nullptr) {
    Placement p;
    p.manager = "Slurm";
    p.rank = get_int("SLURM_PROCID", p.manager);
    p.size = get_int("SLURM_NTASKS", p.manager);
    p.local_rank = get_int("SLURM_LOCALID", p.manager);
    p.node = get_int("SLURM_NODEID", p.manager);
    p.nodes = get_int("SLURM_NNODES", p.manager);
    if (p.nodes <= 0 || p.size % p.nodes != 0)
      fail("Slurm: {} tasks on {} nodes; run the same number of tasks on every node (--ntasks-per-node)", p.size,
           p.nodes);
    p.local_size = p.size / p.nodes;
    if (const char* job = env_value("SLURM_JOB_ID")) {
      const char* step = env_value("SLURM_STEP_ID");
      p.job = std::string("slurm") + job + "-" + (step != nullptr ? step : "0");
    }
    return p;
  }
  for (const BlockManager& m : kBlockManagers) {
    if (env_value(m.rank) == nullptr) continue;
    Placement p;
    p.manager = m.name;
    p.rank = get_int(m.rank, p.manager);
    p.size = get_int(m.size, p.manager);
    p.local_rank = get_int(m.local_rank, p.manager);
    p.local_size = get_int(m.local_size, p.manager);
    node_from_blocks(&p);
    if (const char* job = env_value(m.job)) p.job = m.job_prefix + std::string(job);
    return p;
  }
  return std::nullopt;
}

// Shared-memory names allow letters, digits, '-' and '_' only.
std::string sanitize(const std::string& id) {
  std::string clean;
  for (char c : id) clean += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  return clean.substr(0, 48);
}

int optional_int(const char* name, int fallback, int min, int max) {
  const char* value = env_value(name);
  if (value == nullptr) return fallback;
  const int64_t n = parse_int(value, std::string("environment variable ") + name, "value");
  if (n < min || n > max) fail("environment variable {}={} is outside {}..{}", name, value, min, max);
  return static_cast<int>(n);
}

}  // namespace

JobEnv job_env_from_cluster_manager() {
  JobEnv env;
  const char* ip_config = env_value("TESSERA_IP_CONFIG");
  if (ip_config == nullptr) return env;  // standalone
  const std::optional<Placement> placement = detect();
  if (!placement) return env;
  const Placement& p = *placement;
  const char* part_config = env_value("TESSERA_PART_CONFIG");
  if (part_config == nullptr)
    fail("{} started this process with TESSERA_IP_CONFIG but without TESSERA_PART_CONFIG (export both)", p.manager);
  env.ip_config = ip_config;
  env.part_config = part_config;
  env.num_servers = optional_int("TESSERA_NUM_SERVERS", 1, 1, 64);
  env.num_samplers = optional_int("TESSERA_NUM_SAMPLERS", 0, 0, 1024);
  env.timeout_s = optional_int("TESSERA_TIMEOUT_S", env.timeout_s, 1, 86400);
  env.num_machines = p.nodes;
  env.machine_id = p.node;
  const char* job = env_value("TESSERA_JOB_ID");
  env.job_id = sanitize(job != nullptr ? job : p.job);
  if (env.job_id.empty())
    fail("{} gives this job no id; export TESSERA_JOB_ID (letters, digits, '-'), the same for every process",
         p.manager);
  const std::vector<MachineAddress> machines = read_ip_config(env.ip_config, env.num_servers);
  if (static_cast<int>(machines.size()) != env.num_machines)
    fail("{} runs the job on {} node(s), but {} lists {} machine(s); list the nodes in the manager's order",
         p.manager, env.num_machines, env.ip_config, machines.size());
  // Server-client mode: nodes the ip_config marks `client` run trainers only.
  const int server_machines = count_server_machines(machines, env.ip_config);
  if (server_machines < env.num_machines) env.num_server_machines = server_machines;
  const int servers_here = env.holds_partition(env.machine_id) ? env.num_servers : 0;
  // Server nodes may run no trainer when client nodes run them.
  const int least = env.num_servers + (server_machines < env.num_machines ? 0 : 1);
  if (p.local_size < least)
    fail("{} runs {} process(es) per node, but {} of them are servers (TESSERA_NUM_SERVERS): start at least {} "
         "per node{}",
         p.manager, p.local_size, env.num_servers, least, least > env.num_servers ? " so that trainers remain" : "");
  env.num_trainers = p.local_size - servers_here;
  if (server_machines < env.num_machines)
    for (int m = 0; m < env.num_machines; ++m)
      env.trainers_per_machine.push_back(p.local_size - (env.holds_partition(m) ? env.num_servers : 0));
  env.role = p.local_rank < servers_here ? Role::kServer : Role::kTrainer;
  if (env.role == Role::kServer) env.server_id = p.local_rank;
  else env.trainer_id = p.local_rank - servers_here;
  env.master_addr = machines[0].ip;
  env.master_port = optional_int("TESSERA_MASTER_PORT", machines[0].store_port(), 1, 65535);
  read_security_variables(&env);
  return env;
}

}  // namespace tessera::job
