// `tessera launch --job job.yml`: a job file instead of an ip_config and
// flags, in the style of GraphLearn-for-PyTorch's run_dist_train_sage_sup.yml.
//
//   command: bin/tessera train sage --num-epochs 20   # required
//   part_config: data/cora.json        # required, relative to each workspace
//   workspace: /srv/job                # every host's, unless a host says otherwise
//   ip_config: ip_config.txt           # name the generated ip_config gets there
//   num_servers: 1                     # per host
//   num_samplers: 0                    # per trainer
//   timeout: 60
//   run_dir: runs/sage                 # as launch --run-dir
//   insecure: false                    # as launch --insecure
//   max_restarts: 0                    # as launch --max-restarts
//   extra_envs: {OMP_NUM_THREADS: 1}
//   ssh: {port: 22, username: me, key: ~/.ssh/id_ed25519, connect_timeout: 5, options: [Key=Value]}
//   hosts:                             # required; machine i = hosts[i]
//     - host: 10.0.0.1                 # address or name
//       base_port: 30050               # default 30050
//       trainers: 2                    # default 1 (0 on servers in server-client mode)
//       role: server                   # or client: trainers only, no partition
//       workspace: /data/job           # optional
//       ssh_port: 2222                 # optional, also ssh_username / ssh_key
//
// Server hosts (the default role) come first: machine i serves partition i.
// The hosts become an ip_config: a temporary file here, and
// <workspace>/<ip_config> on every remote host (written by the launch's
// checks), which is where the processes read it.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <type_traits>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "tessera/job/ip_config.h"
#include "launch/launch.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera::launch {
namespace {

class JobReader {
 public:
  explicit JobReader(std::string path) : path_(std::move(path)) {}

  template <typename T>
  T get(const YAML::Node& node, const std::string& key, const std::string& where, T fallback) const {
    const YAML::Node value = node[key];
    if (!value) return fallback;
    try {
      return value.as<T>();
    } catch (const YAML::Exception&) {
      fail("{}:{}: {}{} is not {}", path_, value.Mark().line + 1, where, key, kind<T>());
    }
  }

  template <typename T>
  T require(const YAML::Node& node, const std::string& key, const std::string& where) const {
    if (!node[key]) fail("{}: {}{} is missing", path_, where, key);
    return get<T>(node, key, where, T{});
  }

  void only(const YAML::Node& node, std::initializer_list<const char*> keys, const std::string& where) const {
    if (!node.IsMap()) fail("{}:{}: {} should be a mapping of keys", path_, node.Mark().line + 1, where.empty() ? "the job" : where);
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) == keys.end())
        fail("{}:{}: unknown key '{}{}'", path_, item.first.Mark().line + 1, where, key);
    }
  }

 private:
  template <typename T>
  static const char* kind() {
    if constexpr (std::is_same_v<T, int>) return "an integer";
    else if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_same_v<T, std::string>) return "a string";
    else return "a list of strings";
  }
  std::string path_;
};

SshOptions read_ssh(const JobReader& r, const YAML::Node& node, SshOptions ssh) {
  if (!node) return ssh;
  r.only(node, {"port", "username", "key", "connect_timeout", "options"}, "ssh.");
  ssh.port = r.get<int>(node, "port", "ssh.", ssh.port);
  ssh.username = r.get<std::string>(node, "username", "ssh.", ssh.username);
  ssh.key = r.get<std::string>(node, "key", "ssh.", ssh.key);
  ssh.connect_timeout_s = r.get<int>(node, "connect_timeout", "ssh.", ssh.connect_timeout_s);
  ssh.options = r.get<std::vector<std::string>>(node, "options", "ssh.", ssh.options);
  return ssh;
}

// A directory removed with its contents when the launch ends.
class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = (fs::temp_directory_path() / "tessera-job-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) fail("cannot create a temporary directory in {}", fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~TempDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

LaunchOptions read_launch_job(const std::string& job_file, std::string* ip_config_name) {
  YAML::Node job;
  try {
    job = YAML::LoadFile(job_file);
  } catch (const YAML::BadFile&) {
    fail("cannot read job file {}", job_file);
  } catch (const YAML::ParserException& e) {
    fail("{}:{}:{}: {}", job_file, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  const JobReader r(job_file);
  r.only(job, {"command", "part_config", "workspace", "ip_config", "num_servers", "num_samplers", "timeout",
               "extra_envs", "ssh", "hosts", "run_dir", "insecure", "max_restarts"},
         "");
  LaunchOptions o;
  o.job_file = job_file;
  o.command = r.require<std::string>(job, "command", "");
  o.part_config = r.require<std::string>(job, "part_config", "");
  o.workspace = r.get<std::string>(job, "workspace", "", ".");
  *ip_config_name = r.get<std::string>(job, "ip_config", "", "ip_config.txt");
  if (ip_config_name->find('/') != std::string::npos) fail("{}: ip_config is a file name, not a path: {}", job_file, *ip_config_name);
  o.num_servers = r.get<int>(job, "num_servers", "", 1);
  o.num_samplers = r.get<int>(job, "num_samplers", "", 0);
  o.timeout_s = r.get<int>(job, "timeout", "", o.timeout_s);
  o.run_dir = r.get<std::string>(job, "run_dir", "", "");
  o.insecure = r.get<bool>(job, "insecure", "", false);
  o.max_restarts = r.get<int>(job, "max_restarts", "", 0);
  if (const YAML::Node envs = job["extra_envs"]) {
    if (!envs.IsMap()) fail("{}:{}: extra_envs should map names to values", job_file, envs.Mark().line + 1);
    std::string group;
    for (const auto& item : envs) group += item.first.as<std::string>() + "=" + item.second.as<std::string>() + " ";
    o.extra_envs.push_back(group);
  }
  o.ssh = read_ssh(r, job["ssh"], o.ssh);
  const YAML::Node hosts = job["hosts"];
  if (!hosts || !hosts.IsSequence() || hosts.size() == 0) fail("{}: hosts is missing (a list, one entry per machine)", job_file);
  std::vector<bool> client;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string where = fmt::format("hosts[{}].", i);
    r.only(hosts[i], {"host", "base_port", "trainers", "role", "workspace", "ssh_port", "ssh_username", "ssh_key"}, where);
    const std::string role = r.get<std::string>(hosts[i], "role", where, "server");
    if (role != "server" && role != "client")
      fail("{}:{}: {}role is '{}', expected server or client", job_file, hosts[i]["role"].Mark().line + 1, where, role);
    client.push_back(role == "client");
  }
  const bool server_client = std::find(client.begin(), client.end(), true) != client.end();
  std::string ip_config;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const YAML::Node h = hosts[i];
    const std::string where = fmt::format("hosts[{}].", i);
    const std::string host = r.require<std::string>(h, "host", where);
    ip_config += fmt::format("{} {}{}\n", host, r.get<int>(h, "base_port", where, job::kDefaultBasePort),
                             client[i] ? " client" : "");
    o.trainers_per_machine.push_back(r.get<int>(h, "trainers", where, server_client && !client[i] ? 0 : 1));
    o.machine_workspaces.push_back(r.get<std::string>(h, "workspace", where, o.workspace));
    SshOptions ssh = o.ssh;
    ssh.port = r.get<int>(h, "ssh_port", where, ssh.port);
    ssh.username = r.get<std::string>(h, "ssh_username", where, ssh.username);
    ssh.key = r.get<std::string>(h, "ssh_key", where, ssh.key);
    o.ssh_by_host[host] = ssh;
  }
  for (std::string& w : o.machine_workspaces) w = fs::absolute(w).lexically_normal().string();
  o.ip_config_text = ip_config;
  return o;
}

int run_launch_job(const std::string& job_file) {
  std::string ip_config_name;
  LaunchOptions o = read_launch_job(job_file, &ip_config_name);
  const TempDirectory dir;
  o.ip_config = dir.path() + "/" + ip_config_name;
  std::ofstream(o.ip_config) << o.ip_config_text;
  return run_launch(o);
}

}  // namespace tessera::launch
