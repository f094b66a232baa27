#include "job_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <map>
#include <set>

#include <fmt/format.h>

#include "host_roles.h"
#include "port_check.h"
#include "tessera/partition/partition_config.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera::launch {
namespace {

using job::JobEnv;
using job::MachineAddress;
using job::Role;
using EnvVars = std::vector<std::pair<std::string, std::string>>;

void check_range(const char* flag, double value, double min, double max) {
  if (value < min || value > max) fail("{} {} is outside {}..{}", flag, value, min, max);
}

void check_options(const LaunchOptions& o) {
  if (o.num_servers != 0) check_range("--num-servers", o.num_servers, 1, 64);
  check_range("--num-trainers", o.num_trainers, 1, 1024);
  for (int n : o.trainers_per_machine) check_range("--num-trainers", n, 0, 1024);
  check_range("--num-samplers", o.num_samplers, 0, 1024);
  check_range("--max-restarts", o.max_restarts, 0, 1000);
  if (o.master_port != 0) check_range("--master-port", o.master_port, 1024, 65535);
  check_range("--timeout", o.timeout_s, 1, 86400);
  check_range("--grace", o.grace_s, 0, 3600);
  if (o.command.empty()) fail("no command to run (the last argument, run with /bin/sh -c)");
}

// Every machine runs the same number of servers: --num-servers, else the
// ip_config's third column (DGL-KE's form), else 1.
std::vector<MachineAddress> read_machines(const std::string& path, int flag, int* num_servers) {
  std::vector<MachineAddress> machines = job::read_ip_config(path, flag > 0 ? flag : 1);
  *num_servers = flag;
  if (flag == 0) {
    *num_servers = machines[0].num_servers > 0 ? machines[0].num_servers : 1;
    if (*num_servers != 1) machines = job::read_ip_config(path, *num_servers);  // recheck overlaps
  }
  for (const auto& m : machines)
    if (m.num_servers > 0 && m.num_servers != *num_servers)
      fail("{}:{}: {} servers, but the job runs {} per machine ({}); every machine runs the same number", path,
           m.line, m.num_servers, *num_servers, flag > 0 ? "--num-servers" : "line " + std::to_string(machines[0].line));
  return machines;
}

// Names the launcher sets for some role; inherited ones are dropped so an
// outer job's TESSERA_SERVER_ID cannot leak into a trainer.
std::vector<std::string> job_variable_names() {
  std::set<std::string> names;
  for (Role role : {Role::kServer, Role::kTrainer}) {
    JobEnv env;
    env.role = role;
    env.trainers_per_machine = {1};  // so that its variables are listed too
    env.num_machines = 2;
    env.num_server_machines = 1;
    env.key_file = "set";
    env.insecure = true;
    for (const auto& [name, value] : env.to_environment()) names.insert(name);
  }
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "TESSERA_RUN_DIR",
                           "TESSERA_RESTART"})
    names.insert(name);
  return {names.begin(), names.end()};
}

EnvVars parse_extra_envs(const std::vector<std::string>& groups, const std::vector<std::string>& reserved) {
  EnvVars vars;
  for (const std::string& group : groups) {
    size_t pos = 0;
    while ((pos = group.find_first_not_of(" \t", pos)) != std::string::npos) {
      const size_t end = std::min(group.find_first_of(" \t", pos), group.size());
      const std::string item = group.substr(pos, end - pos);
      pos = end;
      const size_t eq = item.find('=');
      const std::string name = item.substr(0, eq);
      const bool valid = eq != std::string::npos && !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                         std::all_of(name.begin(), name.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                         });
      if (!valid) fail("--extra-envs: '{}' is not NAME=VALUE", item);
      if (std::find(reserved.begin(), reserved.end(), name) != reserved.end())
        fail("--extra-envs: {} is set by the launcher", name);
      vars.emplace_back(name, item.substr(eq + 1));
    }
  }
  return vars;
}

// Every port the job will listen on here must be free now; a clash found
// later costs a timeout on every other process. (A remote host's ports are
// its servers' to check: a server that cannot bind fails the job at once.)
void check_ports(const std::vector<MachineAddress>& machines, const std::vector<bool>& local, int num_servers,
                 int master_port, const std::string& ip_config) {
  struct Use {
    std::string ip;
    int port;
    std::string what;
  };
  std::vector<Use> uses;
  const auto where = [&](size_t m) { return fmt::format("{}:{}", ip_config, machines[m].line); };
  if (local[0])
    uses.push_back({machines[0].ip, master_port, fmt::format("the rendezvous store of machine 0, {}", where(0))});
  for (size_t m = 0; m < machines.size(); ++m)
    for (int s = 0; s < num_servers && local[m] && !machines[m].client; ++s)
      uses.push_back({machines[m].ip, machines[m].server_port(s),
                      fmt::format("server {} of machine {}, {}", s, m, where(m))});
  // read_ip_config keeps machines apart; only --master-port can collide.
  for (size_t m = 0; m < machines.size(); ++m)
    for (int s = 0; s < num_servers && !machines[m].client; ++s)
      if (machines[m].ip == machines[0].ip && machines[m].server_port(s) == master_port)
        fail("--master-port {} is the port of server {} of machine {}, {}", master_port, s, m, where(m));
  for (const Use& u : uses)
    if (!port_free(u.ip, u.port)) fail("port {} on {} ({}) is already in use", u.port, u.ip, u.what);
}

}  // namespace

void check_local_ports(const JobPlan& plan) {
  check_ports(plan.machines, plan.machine_is_local, plan.num_servers, plan.master_port, plan.ip_config);
}

namespace {

// Where torch.distributed's store listens: on the machine of trainer rank 0,
// at the first port after that machine's own (its servers', or its base port
// on a client machine), so that every port still comes from the ip_config.
struct TorchRendezvous {
  std::string ip;
  int port = 0;
};

TorchRendezvous torch_rendezvous(const JobPlan& plan, const std::vector<int>& trainers, int master_port) {
  size_t m = 0;
  while (m + 1 < trainers.size() && trainers[m] == 0) ++m;
  const MachineAddress& machine = plan.machines[m];
  TorchRendezvous r{machine.ip, machine.client ? machine.base_port : machine.server_port(plan.num_servers)};
  const auto where = fmt::format("{}:{}", plan.ip_config, machine.line);
  // Only programs that call torch.distributed.init_process_group use this
  // port, so a clash is a warning: the native trainers never open it.
  std::string problem;
  for (size_t o = 0; o < plan.machines.size() && problem.empty(); ++o) {
    const MachineAddress& other = plan.machines[o];
    if (other.ip != r.ip) continue;
    bool clash = o == 0 && r.port == master_port;
    for (int s = 0; s < plan.num_servers && !other.client; ++s) clash |= other.server_port(s) == r.port;
    if (clash) problem = fmt::format("machine {} uses it (leave one more port between the machines' base ports)", o);
  }
  if (problem.empty() && plan.machine_is_local[m] && !port_free(r.ip, r.port)) problem = "it is already in use";
  if (!problem.empty())
    fmt::print(stderr,
               "tessera launch: warning: port {} on {} (after machine {}'s servers, {}) is torch.distributed's "
               "MASTER_PORT, but {}; a program that calls init_process_group will fail\n",
               r.port, r.ip, m, where, problem);
  return r;
}

}  // namespace

std::string machine_part_config(const JobPlan& plan, size_t machine) {
  return (fs::path(plan.workspaces[machine]) / plan.part_config).lexically_normal().string();
}

std::string local_key_file(const std::string& job_id) {
  // tmpfs, never a disk. Not named like the job's shared-memory segments:
  // it is no segment; the launcher and its guardian remove it by name.
  return "/dev/shm/tessera-key." + job_id;
}

std::string new_job_id() {
  std::random_device device;
  return fmt::format("j{}-{:06x}", ::getpid(), device() & 0xffffff);
}

JobPlan plan_job(const LaunchOptions& o) {
  check_options(o);
  JobPlan plan;
  std::error_code ec;
  fs::path workspace = fs::absolute(o.workspace).lexically_normal();
  if (!workspace.has_filename() && workspace.has_parent_path()) workspace = workspace.parent_path();  // "dir/"
  plan.workspace = workspace.string();
  // As in DGL: the ip_config is the launcher's (current directory); the
  // partition config is the job's (the workspace, where the command runs).
  plan.ip_config = fs::absolute(o.ip_config).lexically_normal().string();
  plan.part_config = o.part_config;
  plan.machines = read_machines(plan.ip_config, o.num_servers, &plan.num_servers);
  plan.num_server_machines = apply_host_roles(&plan.machines, o.server_hosts, o.client_hosts, plan.ip_config);
  if (!o.machine_workspaces.empty() && o.machine_workspaces.size() != plan.machines.size())
    fail("{} workspaces for {} machines", o.machine_workspaces.size(), plan.machines.size());
  for (size_t m = 0; m < plan.machines.size(); ++m) {
    plan.machine_is_local.push_back(job::is_local_address(plan.machines[m].ip));
    plan.workspaces.push_back(o.machine_workspaces.empty() ? plan.workspace : o.machine_workspaces[m]);
    if (plan.machine_is_local[m] && !fs::is_directory(plan.workspaces[m], ec))
      fail("workspace {} is not a directory", plan.workspaces[m]);
  }
  std::map<std::string, size_t> remote_index;
  for (size_t m = 0; m < plan.machines.size(); ++m) {
    const MachineAddress& machine = plan.machines[m];
    if (plan.machine_is_local[m]) continue;
    const auto [it, added] = remote_index.emplace(machine.host, plan.remote_hosts.size());
    if (added) {
      RemoteHost host;
      host.host = machine.host;
      host.where = o.job_file.empty() ? fmt::format("{}:{}", plan.ip_config, machine.line)
                                      : fmt::format("{}: hosts[{}]", o.job_file, m);
      const auto ssh = o.ssh_by_host.find(machine.host);
      host.ssh = ssh != o.ssh_by_host.end() ? ssh->second : o.ssh;
      host.workspace = plan.workspaces[m];
      // Remote processes read the ip_config in their workspace, where
      // `tessera copy` (or a job file's launch) puts it.
      host.ip_config_path = (fs::path(host.workspace) / fs::path(plan.ip_config).filename()).string();
      host.ip_config_text = o.ip_config_text;
      host.files = {host.ip_config_path, (fs::path(host.workspace) / o.part_config).lexically_normal().string()};
      plan.remote_hosts.push_back(host);
    }
    RemoteHost& host = plan.remote_hosts[it->second];
    for (int s = 0; s < plan.num_servers && !machine.client; ++s)
      host.ports.emplace_back(machine.server_port(s), fmt::format("server {} of machine {}", s, m));
  }

  // The partition count is checked here when a machine is local (remote
  // hosts are only checked for the file: reading it there costs a round trip).
  const auto first_local = std::find(plan.machine_is_local.begin(), plan.machine_is_local.end(), true);
  if (first_local != plan.machine_is_local.end()) {
    const std::string path = machine_part_config(plan, static_cast<size_t>(first_local - plan.machine_is_local.begin()));
    const PartitionConfig parts = PartitionConfig::load(path);
    if (parts.num_parts != plan.num_server_machines)
      fail("part config {} has {} partitions but ip_config {} lists {} machines{}; "
           "partition the graph into as many parts as server machines",
           path, parts.num_parts, plan.ip_config, plan.num_server_machines,
           plan.num_server_machines == static_cast<int>(plan.machines.size()) ? "" : " holding partitions");
  }

  const std::vector<std::string> reserved = job_variable_names();
  const EnvVars extra = parse_extra_envs(o.extra_envs, reserved);
  const int master_port = o.master_port != 0 ? o.master_port : plan.machines[0].store_port();
  if (!plan.machine_is_local[0])
    plan.remote_hosts[0].ports.emplace_back(master_port, "the rendezvous store of machine 0");
  plan.master_port = master_port;
  check_local_ports(plan);

  // In server-client mode the trainers run on the clients, unless counts
  // per machine say otherwise.
  const bool server_client = plan.num_server_machines < static_cast<int>(plan.machines.size());
  std::vector<int> trainers;
  for (const MachineAddress& m : plan.machines) trainers.push_back(server_client && !m.client ? 0 : o.num_trainers);
  if (!o.trainers_per_machine.empty()) {
    if (o.trainers_per_machine.size() != plan.machines.size())
      fail("--num-trainers gives {} counts but ip_config {} lists {} machines; give one count, or one per machine",
           o.trainers_per_machine.size(), plan.ip_config, plan.machines.size());
    trainers = o.trainers_per_machine;
    if (std::all_of(trainers.begin(), trainers.end(), [](int n) { return n == 0; }))
      fail("--num-trainers {}: the job has no trainers", fmt::join(trainers, ","));
  }
  plan.trainers_per_machine = trainers;

  const TorchRendezvous torch_store = torch_rendezvous(plan, trainers, master_port);

  plan.job_id = new_job_id();
  plan.keys = net::generate_job_keys();
  plan.key_file = local_key_file(plan.job_id);
  JobEnv env;
  env.job_id = plan.job_id;
  env.num_machines = static_cast<int>(plan.machines.size());
  env.num_servers = plan.num_servers;
  env.num_server_machines = plan.num_server_machines;
  if (std::any_of(trainers.begin(), trainers.end(), [&](int n) { return n != trainers[0]; }))
    env.trainers_per_machine = trainers;
  env.num_samplers = o.num_samplers;
  env.ip_config = plan.ip_config;

  env.master_addr = plan.machines[0].ip;
  env.master_port = master_port;
  env.timeout_s = o.timeout_s;
  env.insecure = o.insecure;
  // Servers first: trainers connect to them.
  for (Role role : {Role::kServer, Role::kTrainer})
    for (int m = 0; m < env.num_machines; ++m)
      for (int i = 0; i < (role == Role::kServer ? (env.holds_partition(m) ? env.num_servers : 0)
                                                 : trainers[static_cast<size_t>(m)]);
           ++i) {
        env.role = role;
        env.machine_id = m;
        env.num_trainers = trainers[static_cast<size_t>(m)];
        env.server_id = role == Role::kServer ? i : 0;
        env.trainer_id = role == Role::kTrainer ? i : 0;
        env.part_config = machine_part_config(plan, static_cast<size_t>(m));
        if (!plan.machine_is_local[m])
          env.ip_config = (fs::path(plan.workspaces[m]) / fs::path(plan.ip_config).filename()).string();
        // A remote host's wrapper writes its own key file (ssh_spawner.cc).
        env.key_file = plan.machine_is_local[m] ? plan.key_file : "";
        EnvVars vars = env.to_environment();
        if (role == Role::kTrainer) {
          // torch.distributed's env:// rendezvous, as DGL's launcher sets it:
          // init_process_group("gloo") and DDP work unchanged in a user's script.
          vars.emplace_back("MASTER_ADDR", torch_store.ip);
          vars.emplace_back("MASTER_PORT", std::to_string(torch_store.port));
          vars.emplace_back("RANK", std::to_string(env.rank()));
          vars.emplace_back("WORLD_SIZE", std::to_string(env.world_size()));
          vars.emplace_back("LOCAL_RANK", std::to_string(i));
        }
        // Servers and trainers share a machine's cores: OpenMP threads that
        // spin after each parallel region starve the others (measured:
        // loopback pulls at a third of their speed with OMP_WAIT_POLICY=active).
        if (std::getenv("OMP_WAIT_POLICY") == nullptr) vars.emplace_back("OMP_WAIT_POLICY", "PASSIVE");
        // Where the built-in trainers write by default (--out, --save_path).
        if (!o.run_dir.empty()) vars.emplace_back("TESSERA_RUN_DIR", o.run_dir);
        // A sanitizer build's settings reach remote processes too (ssh passes
        // no environment): where reports go, and the suppressions.
        if (!plan.machine_is_local[m])
          for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"})
            if (const char* value = std::getenv(name)) vars.emplace_back(name, value);
        vars.insert(vars.end(), extra.begin(), extra.end());
        const MachineAddress& machine = plan.machines[m];
        ProcessSpec spec{machine.host, !plan.machine_is_local[m], plan.workspaces[m], o.command, vars, reserved};
        plan.processes.push_back({spec.remote ? env.label() + "@" + machine.host : env.label(), role, spec});
        env.ip_config = plan.ip_config;
      }
  return plan;
}

}  // namespace tessera::launch
