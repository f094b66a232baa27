// Runs a job's processes to the end: starts them, relays their output, and
// applies the exit rules (see Supervisor::run). Knows nothing of ip_configs
// or partitions; job_plan.h decides what to run.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "line_relay.h"
#include "signal_pipe.h"
#include "tessera/job/job_env.h"
#include "launch/spawner.h"
#include "run/launch_record.h"

namespace tessera::launch {

struct SupervisedProcess {
  std::string label;  // "m0/server/1"
  job::Role role;
  ProcessSpec spec;
};

using run::ProcessOutcome;  // how a process went, for the launch record (run/launch_record.h)

struct SupervisorOptions {
  double grace_s = 3;         // after a failure, before SIGTERM
  double server_wait_s = 30;  // after the trainers succeed, before stopping servers
  double term_wait_s = 3;     // after SIGTERM, before SIGKILL
  // Remote processes stop by their stdin closing (spawner.h); their wrappers
  // need this much longer than term_wait_s to stop and clean up on the host.
  double remote_stop_extra_s = 3;
};

class Supervisor {
 public:
  Supervisor(Spawner& spawner, SupervisorOptions options);

  // Starts the processes in order and waits:
  //  - all trainers exit 0: servers get server_wait_s to exit by themselves;
  //    one still running then is an error (exit code 1);
  //  - a process exits non-zero or by a signal: the rest get grace_s to exit
  //    (so their own errors reach the log), then are stopped; the exit code
  //    is the first failure's (128 + signal for a signal);
  //  - SIGINT / SIGTERM / SIGHUP to the launcher: all are stopped at once;
  //    the exit code is 128 + that signal.
  // "Stopped" is SIGTERM to each process group, then SIGKILL after
  // term_wait_s; a process with a stdin pipe (a remote one) instead has its
  // stdin closed, and its SIGKILL waits remote_stop_extra_s longer. On return (and on an exception) every process is reaped and
  // every process group is gone.
  int run(const std::vector<SupervisedProcess>& processes);
  // Whether run() ended because the launcher got SIGINT / SIGTERM / SIGHUP.
  bool interrupted() const { return interrupt_ != 0; }

  // Every process started so far, in start order: host, times, exit, memory.
  std::vector<ProcessOutcome> outcomes() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Child {
    std::string label;
    job::Role role;
    pid_t pid;
    int stdin_fd;  // -1 unless the spawner gave one (spawner.h); -1 once closed
    bool remote;   // it had one: it stops by hang-up, not by SIGTERM
    bool running;
    bool group_gone;  // no process of its group is left
    LineRelay out, err;
    ProcessOutcome outcome;
    Clock::time_point started;
  };

  void start(const SupervisedProcess& process);
  // Polls (relaying output, reaping, noting signals) until done() or the
  // deadline; returns done().
  bool wait_until(const std::function<bool()>& done, Clock::time_point deadline);
  void poll_once(Clock::duration timeout);
  void reap();
  void on_exit(Child& child, int status, const ::rusage& usage);
  void on_signal(int sig);
  bool any_running(bool servers, bool trainers) const;
  bool all_gone();
  // Signals the process groups; with local_only, those without a stdin pipe.
  void signal_groups(int sig, bool local_only);
  void close_stdins();
  void stop_all();
  static Clock::time_point after(double seconds);

  Spawner& spawner_;
  SupervisorOptions options_;
  SignalPipe signals_;
  std::vector<Child> children_;
  int first_failure_ = -1;  // exit code of the first failed process
  int interrupt_ = 0;       // the signal that asked the launcher to stop
  int signals_seen_ = 0;    // stop signals so far; another one hurries stop_all
  bool stopping_ = false;   // exits from now on are our doing, not reported
};

}  // namespace tessera::launch
