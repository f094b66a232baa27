#include "io/text.h"
#include "launch/launch.h"
#include "tools/commands.h"

namespace tessera {
namespace {

// "2" (every machine) or "2,1,1" (one per machine, in ip_config order).
void parse_trainer_counts(const std::string& text, launch::LaunchOptions* o) {
  std::vector<std::string_view> fields;
  split_fields(text, ",", false, &fields);
  std::vector<int> counts;
  for (std::string_view f : fields) counts.push_back(static_cast<int>(parse_int(f, "--num-trainers", "count")));
  if (counts.size() == 1) o->num_trainers = counts[0];
  else o->trainers_per_machine = counts;
}

}  // namespace

void add_ssh_flags(CLI::App* cmd, launch::SshOptions& ssh) {
  cmd->add_option("--ssh-port,--ssh_port", ssh.port, "ssh port of remote hosts (default: ssh's)");
  cmd->add_option("--ssh-username,--ssh_username", ssh.username, "user name on remote hosts (default: ssh's)");
  cmd->add_option("--ssh-key,--ssh_key", ssh.key, "identity file for ssh (default: ssh's)");
  cmd->add_option("--ssh-option", ssh.options, "Key=Value passed to ssh as -o (repeatable)")->allow_extra_args(false);
  cmd->add_option("--ssh-connect-timeout", ssh.connect_timeout_s, "seconds to wait for a host to answer (default 5)");
}

void add_host_role_flags(CLI::App* cmd, std::vector<std::string>& server_hosts, std::vector<std::string>& client_hosts) {
  cmd->add_option("--server-hosts,--server_hosts", server_hosts,
                  "server-client mode: machines that hold partitions (HOST or HOST:BASE_PORT, comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--client-hosts,--client_hosts", client_hosts,
                  "server-client mode: machines that run only trainers and hold no partition")
      ->delimiter(',')
      ->allow_extra_args(false);
}

void add_launch_command(CLI::App& app) {
  auto o = std::make_shared<launch::LaunchOptions>();
  CLI::App* cmd = app.add_subcommand("launch", "run a job's servers and trainers on the machines of an ip_config");
  cmd->allow_extras(false);
  cmd->add_option("--workspace", o->workspace, "directory the command runs in (default: the current one)");
  auto job = std::make_shared<std::string>();
  CLI::Option* job_flag = cmd->add_option("--job", *job, "a YAML job file instead of --ip-config, the flags and the command");
  cmd->add_option("--ip-config,--ip_config", o->ip_config, "one line per machine: HOST [base_port [num_servers]]")
      ->excludes(job_flag);
  cmd->add_option("--part-config,--part_config", o->part_config,
                  "partition config <out>/<graph>.json (relative to the workspace)")
      ->excludes(job_flag);
  cmd->add_option("--num-servers,--num_servers", o->num_servers,
                  "servers per machine (default: the ip_config's third column, else 1)");
  auto trainers = std::make_shared<std::string>("1");
  cmd->add_option("--num-trainers,--num_trainers", *trainers,
                  "trainers per machine (default 1), or one count per machine: 2,1");
  cmd->add_option("--num-samplers,--num_samplers", o->num_samplers, "sampler threads per trainer (default 0)");
  // One value per occurrence, so that it never swallows the command.
  cmd->add_option("--extra-envs,--extra_envs", o->extra_envs, "\"A=1 B=2\": more environment for every process")
      ->allow_extra_args(false);
  cmd->add_option("--master-port,--master_port", o->master_port, "rendezvous port (default: machine 0's base port)");
  cmd->add_option("--run-dir,--run_dir", o->run_dir,
                  "the run's folder (relative to the workspace): trainers write there by default (TESSERA_RUN_DIR), "
                  "and the launcher records each process's host, role, exit code, duration and peak memory in "
                  "launch.json, for tessera report");
  cmd->add_option("--timeout", o->timeout_s, "seconds processes wait for their peers (TESSERA_TIMEOUT_S, default 60)");
  cmd->add_flag("--insecure", o->insecure,
               "authenticate the job's connections but do not encrypt them (trusted networks only; the default is "
               "CURVE encryption with a key pair made for the job)");
  cmd->add_option("--max-restarts,--max_restarts", o->max_restarts,
                  "start a failed job again on the same machines this many times (TESSERA_RESTART=k; the built-in "
                  "trainers resume from their newest checkpoint; default 0)");
  cmd->add_option("--grace", o->grace_s, "seconds the others get to exit after a failure, before SIGTERM (default 3)");
  add_ssh_flags(cmd, o->ssh);
  add_host_role_flags(cmd, o->server_hosts, o->client_hosts);
  cmd->add_option("command", o->command, "command to run, one string for /bin/sh -c")->excludes(job_flag);
  cmd->callback([o, trainers, job] {
    int code;
    if (!job->empty()) {
      code = launch::run_launch_job(*job);
    } else {
      for (const auto& [value, name] : {std::pair{&o->ip_config, "--ip-config"}, {&o->part_config, "--part-config"},
                                        {&o->command, "command"}})
        if (value->empty()) throw CLI::RequiredError(name);
      parse_trainer_counts(*trainers, o.get());
      code = launch::run_launch(*o);
    }
    // The job's exit code is the launcher's; CLI::RuntimeError carries it out
    // of the parse without printing anything.
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tessera
