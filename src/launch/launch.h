// `tessera launch`: starts a job's servers and trainers on the machines of an
// ip_config, relays their logs, and tears everything down when the job ends
// or fails (DGL's tools/launch.py). Machines whose address is this host's run
// as local processes; the others are reached over ssh (ssh.h).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tessera::launch {

// How to reach remote hosts: the flags of DGL's launch.py and copy_files.py,
// plus raw `-o` options for anything else (known_hosts files, ciphers).
struct SshOptions {
  int port = 0;           // 0: ssh's default (22, or ~/.ssh/config)
  std::string username;   // "": ssh's default
  std::string key;        // identity file; "": ssh's default keys
  int connect_timeout_s = 5;
  // An established connection whose host answers no keep-alive for this
  // long is given up (`tessera launch` sets the job's --timeout).
  int alive_timeout_s = 6;
  std::vector<std::string> options;  // each "Key=Value", passed as -o
};

struct LaunchOptions {
  std::string workspace = ".";  // the command runs here
  std::string ip_config;        // relative to the current directory
  std::string part_config;      // relative to the workspace
  int num_servers = 0;          // 0: from the ip_config's num_servers column, else 1
  int num_trainers = 1;
  // One count per machine, in ip_config order (--num-trainers 2,1); when
  // set, it overrides num_trainers. DGL's launch.py cannot do this.
  std::vector<int> trainers_per_machine;
  // Server-client mode (host_roles.h): machines that hold partitions and
  // run servers, and client machines that run only trainers. Without a
  // per-machine count, clients run num_trainers and servers none.
  std::vector<std::string> server_hosts;
  std::vector<std::string> client_hosts;
  int num_samplers = 0;
  std::vector<std::string> extra_envs;  // each "A=1 B=2"
  int master_port = 0;                  // 0: machine 0's base port
  int timeout_s = 60;                   // TESSERA_TIMEOUT_S for the processes
  // Authenticate the job's connections but do not encrypt them (PLAIN
  // instead of CURVE, net/security.h): for trusted networks.
  bool insecure = false;
  // A failed job (a process exits non-zero or is killed; not the launcher
  // interrupted) is torn down and started again on the same machines and
  // ports this many times, with TESSERA_RESTART=k in every process's
  // environment: the built-in trainers then resume from their newest
  // checkpoint. The exit code is the last attempt's.
  int max_restarts = 0;
  double grace_s = 3;       // how long the others may finish after a failure
  double server_wait_s = 30;  // how long servers may take to exit after the trainers
  std::string command;      // run with /bin/sh -c in the workspace
  // Relative to each workspace (or absolute): the processes get it as
  // TESSERA_RUN_DIR (the built-in trainers' default --out), and the launcher
  // writes its record of the processes there (launch.json, run/launch_record.h).
  std::string run_dir;
  SshOptions ssh;
  // Set by a job file (launch --job): machines in ip_config order.
  std::vector<std::string> machine_workspaces;   // empty: `workspace` everywhere
  std::map<std::string, SshOptions> ssh_by_host;  // hosts with their own ssh settings
  std::string ip_config_text;  // the generated ip_config, written to remote workspaces too
  std::string job_file;        // for messages
};

// Checks everything, runs the job and cleans up; returns the launcher's exit
// code (0, the first failure's code, or 128 + signal when interrupted).
// Throws tessera::Error for problems found before any process starts.
int run_launch(const LaunchOptions& options);

// `tessera launch --job job.yml`, in the style of GraphLearn-for-PyTorch's
// job files: hosts (address or name, base port, trainers, and optionally
// their own workspace and ssh port / user / key), the command, the
// partition config, server / sampler counts, environment and ssh settings,
// instead of an ip_config and flags (format in job_file.cc). The ip_config
// is generated from the hosts and written to every remote workspace.
int run_launch_job(const std::string& job_file);

// The reading half of run_launch_job: the job file's options, checked, with
// the generated ip_config in ip_config_text (`ip_config` is left empty) and
// the file name it gets in *ip_config_name. Throws tessera::Error naming the
// file and line.
LaunchOptions read_launch_job(const std::string& job_file, std::string* ip_config_name);

// `tessera copy` (DGL's tools/copy_files.py): puts on machine i of an
// ip_config what its processes read, and nothing more: partition i's arrays
// and the dataset-level files (under <workspace>/<rel_data_path>, keeping the
// layout the partition config's relative paths expect), the partition config,
// the ip_config, and the script folder's contents. rsync when this host has
// it, so that re-running sends only what changed; tar over ssh otherwise.
// Machines of this host are copied to locally. All machines at once.
struct CopyOptions {
  std::string ip_config;               // local path
  std::string workspace;               // absolute path, the same on every machine
  std::string rel_data_path = "data";  // partitions go to <workspace>/<rel_data_path>
  std::string part_config;             // local <out>/<graph>.json
  std::string script_folder;           // optional: its contents go to <workspace>
  std::vector<std::string> server_hosts, client_hosts;  // as for launch; clients get no partition
  SshOptions ssh;
  bool use_rsync = true;  // false: tar over ssh
};

// Throws tessera::Error naming the machine that failed.
void copy_files(const CopyOptions& options);

}  // namespace tessera::launch
