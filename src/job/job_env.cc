#include "tessera/job/job_env.h"

#include <cctype>
#include <cstdlib>

#include "base/env.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace tessera::job {
namespace {

std::string require(const char* name) {
  const char* value = env_value(name);
  if (value == nullptr) fail("environment variable {} is not set (the launcher sets it; see `tessera launch`)", name);
  return value;
}

int require_int(const char* name, int min, int max) {
  const std::string value = require(name);
  const int64_t n = parse_int(value, std::string("environment variable ") + name, "value");
  if (n < min || n > max) fail("environment variable {}={} is outside {}..{}", name, value, min, max);
  return static_cast<int>(n);
}

}  // namespace

int launcher_restart() { return env_value("TESSERA_RESTART") ? require_int("TESSERA_RESTART", 0, 1000) : 0; }

void read_security_variables(JobEnv* env) {
  const char* key_file = env_value("TESSERA_KEY_FILE");
  if (key_file == nullptr)
    fail("environment variable TESSERA_KEY_FILE is not set: a job's processes need its key file (`tessera launch` "
         "makes one; for srun / mpirun, make one with `tessera keygen FILE` and export TESSERA_KEY_FILE=FILE)");
  env->key_file = key_file;
  if (const char* insecure = env_value("TESSERA_INSECURE")) {
    const std::string value = insecure;
    if (value != "0" && value != "1") fail("environment variable TESSERA_INSECURE={} is not 0 or 1", value);
    env->insecure = value == "1";
  }
}

std::string role_name(Role role) {
  switch (role) {
    case Role::kServer: return "server";
    case Role::kTrainer: return "trainer";
    case Role::kStandalone: return "standalone";
  }
  return "?";
}

int JobEnv::trainers_on(int machine) const {
  return trainers_per_machine.empty() ? num_trainers : trainers_per_machine.at(static_cast<size_t>(machine));
}

int JobEnv::rank() const {
  int before = 0;
  for (int m = 0; m < machine_id; ++m) before += trainers_on(m);
  return before + trainer_id;
}

bool JobEnv::trainers_cover_partitions() const {
  if (server_machines() != num_machines) return false;
  for (int m = 0; m < num_machines; ++m)
    if (trainers_on(m) == 0) return false;
  return true;
}

int JobEnv::world_size() const {
  if (trainers_per_machine.empty()) return num_machines * num_trainers;
  int total = 0;
  for (int n : trainers_per_machine) total += n;
  return total;
}

std::string JobEnv::label() const {
  const int id = role == Role::kServer ? server_id : trainer_id;
  return "m" + std::to_string(machine_id) + "/" + role_name(role) + "/" + std::to_string(id);
}

JobEnv JobEnv::from_environment() {
  JobEnv env;
  const char* role = env_value("TESSERA_ROLE");
  if (role == nullptr) return job_env_from_cluster_manager();  // or standalone
  const std::string r = role;
  if (r == "server") env.role = Role::kServer;
  else if (r == "trainer") env.role = Role::kTrainer;
  else fail("environment variable TESSERA_ROLE={} is not 'server' or 'trainer'", r);
  env.job_id = require("TESSERA_JOB_ID");
  for (char c : env.job_id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      fail("environment variable TESSERA_JOB_ID={} may hold only letters, digits, '-' and '_'", env.job_id);
  env.num_machines = require_int("TESSERA_NUM_MACHINES", 1, 1 << 16);
  env.machine_id = require_int("TESSERA_MACHINE_ID", 0, env.num_machines - 1);
  env.num_servers = require_int("TESSERA_NUM_SERVERS", 1, 64);
  env.num_trainers = require_int("TESSERA_NUM_TRAINERS", 0, 1024);
  if (const char* list = env_value("TESSERA_TRAINERS_PER_MACHINE")) {
    std::vector<std::string_view> fields;
    split_fields(list, ",", false, &fields);
    for (std::string_view f : fields) {
      const int64_t n = parse_int(f, "environment variable TESSERA_TRAINERS_PER_MACHINE", "count");
      if (n < 0 || n > 1024) fail("environment variable TESSERA_TRAINERS_PER_MACHINE={}: {} is outside 0..1024", list, n);
      env.trainers_per_machine.push_back(static_cast<int>(n));
    }
    if (static_cast<int>(env.trainers_per_machine.size()) != env.num_machines ||
        env.trainers_per_machine[static_cast<size_t>(env.machine_id)] != env.num_trainers)
      fail("environment variable TESSERA_TRAINERS_PER_MACHINE={} does not give {} machines with {} trainers on "
           "machine {}",
           list, env.num_machines, env.num_trainers, env.machine_id);
  }
  if (env_value("TESSERA_NUM_SERVER_MACHINES"))
    env.num_server_machines = require_int("TESSERA_NUM_SERVER_MACHINES", 1, env.num_machines);
  if (env.role == Role::kServer && !env.holds_partition(env.machine_id))
    fail("machine {} is a client (TESSERA_NUM_SERVER_MACHINES={}) and runs no servers", env.machine_id,
         env.num_server_machines);
  if (env.world_size() < 1) fail("the job has no trainers");
  env.num_samplers = env_value("TESSERA_NUM_SAMPLERS") ? require_int("TESSERA_NUM_SAMPLERS", 0, 1024) : 0;
  if (env.role == Role::kServer) env.server_id = require_int("TESSERA_SERVER_ID", 0, env.num_servers - 1);
  else env.trainer_id = require_int("TESSERA_TRAINER_ID", 0, env.num_trainers - 1);
  env.ip_config = require("TESSERA_IP_CONFIG");
  env.part_config = require("TESSERA_PART_CONFIG");
  env.master_addr = require("TESSERA_MASTER_ADDR");
  env.master_port = require_int("TESSERA_MASTER_PORT", 1, 65535);
  if (env_value("TESSERA_TIMEOUT_S")) env.timeout_s = require_int("TESSERA_TIMEOUT_S", 1, 86400);
  read_security_variables(&env);
  return env;
}

std::vector<std::pair<std::string, std::string>> JobEnv::to_environment() const {
  std::vector<std::pair<std::string, std::string>> vars = {
      {"TESSERA_ROLE", role_name(role)},
      {"TESSERA_JOB_ID", job_id},
      {"TESSERA_MACHINE_ID", std::to_string(machine_id)},
      {"TESSERA_NUM_MACHINES", std::to_string(num_machines)},
      {"TESSERA_NUM_SERVERS", std::to_string(num_servers)},
      {"TESSERA_NUM_TRAINERS", std::to_string(num_trainers)},
      {"TESSERA_NUM_SAMPLERS", std::to_string(num_samplers)},
      {"TESSERA_IP_CONFIG", ip_config},
      {"TESSERA_PART_CONFIG", part_config},
      {"TESSERA_MASTER_ADDR", master_addr},
      {"TESSERA_MASTER_PORT", std::to_string(master_port)},
      {"TESSERA_TIMEOUT_S", std::to_string(timeout_s)},
  };
  if (!key_file.empty()) vars.emplace_back("TESSERA_KEY_FILE", key_file);
  if (insecure) vars.emplace_back("TESSERA_INSECURE", "1");
  if (num_server_machines > 0 && num_server_machines < num_machines)
    vars.emplace_back("TESSERA_NUM_SERVER_MACHINES", std::to_string(num_server_machines));
  if (!trainers_per_machine.empty()) {
    std::string list;
    for (int n : trainers_per_machine) list += (list.empty() ? "" : ",") + std::to_string(n);
    vars.emplace_back("TESSERA_TRAINERS_PER_MACHINE", list);
  }
  if (role == Role::kServer) vars.emplace_back("TESSERA_SERVER_ID", std::to_string(server_id));
  else vars.emplace_back("TESSERA_TRAINER_ID", std::to_string(trainer_id));
  return vars;
}

}  // namespace tessera::job
