#include "launch/launch.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "guardian.h"
#include "net/security.h"
#include "job_plan.h"
#include "line_relay.h"
#include "remote_hosts.h"
#include "run/launch_record.h"
#include "supervisor.h"
#include "tessera/base/error.h"
#include "tessera/store/shared_memory.h"

namespace tessera::launch {
namespace {

// Segments the job's processes left behind (a SIGKILLed server cannot clean
// up): removed on every way out, success or failure.
void remove_segments(const std::string& job_id) {
  const int removed = store::remove_job_segments(job_id);
  if (removed > 0)
    write_all(STDERR_FILENO, fmt::format("launch: removed {} shared-memory segment(s) of job {}\n", removed, job_id));
}

// "2" when every machine runs 2, else "2,1,1".
std::string counts(const std::vector<int>& per_machine) {
  std::string list;
  for (int n : per_machine) list += (list.empty() ? "" : ",") + std::to_string(n);
  const bool same = std::all_of(per_machine.begin(), per_machine.end(), [&](int n) { return n == per_machine[0]; });
  return same ? std::to_string(per_machine[0]) : list;
}

// What the job's processes left on this host and the remote hosts (shared
// memory, remote key files): after a failed attempt and at the end. Returns
// the remote hosts ssh could not reach.
std::vector<std::string> remove_leftovers(const JobPlan& plan) {
  remove_segments(plan.job_id);
  std::vector<std::string> unreachable = sweep_remote_hosts(plan.remote_hosts, plan.job_id);
  for (const std::string& host : unreachable)
    write_all(STDERR_FILENO, fmt::format("launch: could not reach {} to check it for leftovers of job {}\n", host,
                                         plan.job_id));
  return unreachable;
}

// `swept`: remove_leftovers has just run, after the last attempt.
void clean_up(const JobPlan& plan, bool swept = false) {
  ::unlink(plan.key_file.c_str());
  if (!swept) remove_leftovers(plan);
}

// Attempt k's processes: the plan's, with TESSERA_RESTART=k after the first.
std::vector<SupervisedProcess> attempt_processes(const JobPlan& plan, int attempt) {
  std::vector<SupervisedProcess> processes = plan.processes;
  if (attempt > 0)
    for (SupervisedProcess& p : processes) p.spec.env.emplace_back("TESSERA_RESTART", std::to_string(attempt));
  return processes;
}

// The record's path: the run dir taken relative to the launcher's workspace.
std::string launch_record_path(const JobPlan& plan, const LaunchOptions& options) {
  return (std::filesystem::path(plan.workspace) / options.run_dir / "launch.json").lexically_normal().string();
}

run::LaunchRecord launch_record(const JobPlan& plan, const LaunchOptions& options, double start_s, int code,
                                std::vector<ProcessOutcome> outcomes,
                                std::vector<std::pair<int, std::vector<ProcessOutcome>>> failed_attempts) {
  run::LaunchRecord r;
  r.job_id = plan.job_id;
  r.command = options.command;
  r.workspace = plan.workspace;
  r.ip_config = plan.ip_config;
  r.part_config = plan.part_config;
  r.num_servers = plan.num_servers;
  r.trainers_per_machine = plan.trainers_per_machine;
  for (size_t m = 0; m < plan.machines.size(); ++m)
    r.machines.push_back({plan.machines[m].host, plan.machines[m].ip, plan.machines[m].base_port,
                          static_cast<bool>(plan.machine_is_local[m]),
                          m >= static_cast<size_t>(plan.num_server_machines)});
  r.start_s = start_s;
  r.exit_code = code;
  r.processes = std::move(outcomes);
  r.failed_attempts = std::move(failed_attempts);
  return r;
}

}  // namespace

int run_launch(const LaunchOptions& options) {
  const JobPlan plan = plan_job(options);
  check_remote_hosts(plan.remote_hosts, options.command);
  store::remove_stale_segments();  // crashed jobs' leftovers
  net::write_key_file(plan.key_file, plan.keys);
  const int clients = static_cast<int>(plan.machines.size()) - plan.num_server_machines;
  write_all(STDERR_FILENO,
            fmt::format("launch: job {}: {} machines{}, {} servers and {} trainers each, {} samplers per trainer, "
                        "in {}{}\n",
                        plan.job_id, plan.machines.size(),
                        clients == 0 ? "" : fmt::format(" ({} of them clients, holding no partition)", clients),
                        plan.num_servers, counts(plan.trainers_per_machine), options.num_samplers, plan.workspace,
                        plan.remote_hosts.empty() ? "" : fmt::format(" ({} remote host(s) over ssh)", plan.remote_hosts.size())));
  auto local = make_local_spawner();
  std::map<std::string, SshOptions> ssh;
  for (RemoteHost h : plan.remote_hosts) {
    h.ssh.alive_timeout_s = options.timeout_s;  // the job's ssh rides through what its processes ride through
    ssh.emplace(h.host, h.ssh);
  }
  auto hosts = make_host_spawner(*local, ssh, plan.job_id, net::key_file_text(plan.keys));
  Guardian guardian(plan.job_id);  // before the first process starts
  GuardedSpawner spawner(*hosts, guardian);
  SupervisorOptions supervise;
  supervise.grace_s = options.grace_s;
  supervise.server_wait_s = options.server_wait_s;
  const double start_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  int code = 0;
  std::vector<ProcessOutcome> outcomes;
  std::vector<std::pair<int, std::vector<ProcessOutcome>>> failed_attempts;
  bool swept = false;
  try {
    for (int attempt = 0;; ++attempt) {
      Supervisor supervisor(spawner, supervise);
      code = supervisor.run(attempt_processes(plan, attempt));
      outcomes = supervisor.outcomes();
      if (code == 0 || supervisor.interrupted() || attempt == options.max_restarts) break;
      failed_attempts.emplace_back(code, outcomes);
      // A host that ssh cannot reach (its link is down, it is off) would fail
      // the restart too, after ssh's connect timeout: end the job now.
      const std::vector<std::string> unreachable = remove_leftovers(plan);
      if (!unreachable.empty()) {
        write_all(STDERR_FILENO, fmt::format("launch: job {} failed (exit code {}); no restart, since {} cannot be "
                                             "reached over ssh\n",
                                             plan.job_id, code, fmt::join(unreachable, ", ")));
        swept = true;
        break;
      }
      check_local_ports(plan);  // a port taken meanwhile is named, not waited for
      write_all(STDERR_FILENO, fmt::format("launch: job {} failed (exit code {}); restart {} of {} on the same "
                                           "machines, with TESSERA_RESTART={}\n",
                                           plan.job_id, code, attempt + 1, options.max_restarts, attempt + 1));
    }
  } catch (...) {
    clean_up(plan);
    throw;
  }
  clean_up(plan, swept);
  if (!options.run_dir.empty()) {
    try {
      write_launch_record(launch_record_path(plan, options),
                          launch_record(plan, options, start_s, code, outcomes, failed_attempts));
    } catch (const std::exception& e) {
      // The job has run; a record it cannot keep should not turn success into failure.
      write_all(STDERR_FILENO, fmt::format("launch: cannot write the run record: {}\n", e.what()));
    }
  }
  return code;
}

}  // namespace tessera::launch
