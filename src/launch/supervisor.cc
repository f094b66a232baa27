#include "supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

constexpr auto kForever = std::chrono::steady_clock::time_point::max();

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// The launcher's own messages go through write(2) like the relayed lines, so
// they never split one.
template <typename... Args>
void say(fmt::format_string<Args...> format, Args&&... args) {
  write_all(STDERR_FILENO, "launch: " + fmt::format(format, std::forward<Args>(args)...) + "\n");
}

}  // namespace

Supervisor::Supervisor(Spawner& spawner, SupervisorOptions options) : spawner_(spawner), options_(options) {}

Supervisor::Clock::time_point Supervisor::after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int Supervisor::run(const std::vector<SupervisedProcess>& processes) {
  // Whatever a shell leaves behind when it exits is re-parented to us rather
  // than to init, so we reap it too and no zombie outlives the job.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  children_.reserve(processes.size());
  try {
    for (const auto& p : processes) {
      start(p);
      reap();  // a process that failed at once stops the rest from starting
      for (int sig : signals_.take()) on_signal(sig);
      if (first_failure_ >= 0 || interrupt_ != 0) break;
    }
    bool servers_overdue = false;  // they had their time; no grace
    const auto failed_or_stopped = [this] { return first_failure_ >= 0 || interrupt_ != 0; };
    wait_until([&] { return failed_or_stopped() || !any_running(false, true); }, kForever);
    if (!failed_or_stopped()) {
      // The trainers are done; the runtime tells the servers to shut down.
      const bool done = wait_until([&] { return failed_or_stopped() || !any_running(true, false); },
                                   after(options_.server_wait_s));
      if (!done) {
        for (const Child& c : children_)
          if (c.running) say("{} still runs {:g}s after the trainers finished; stopping it", c.label, options_.server_wait_s);
        first_failure_ = 1;
        servers_overdue = true;
      }
    }
    if (first_failure_ >= 0 && interrupt_ == 0 && !servers_overdue) {
      // Let the others notice the failure and say so before we stop them.
      wait_until([&] { return interrupt_ != 0 || !any_running(true, true); }, after(options_.grace_s));
    }
    stop_all();
  } catch (...) {
    stop_all();
    throw;
  }
  if (first_failure_ >= 0) return first_failure_;
  return interrupt_ != 0 ? 128 + interrupt_ : 0;
}

void Supervisor::start(const SupervisedProcess& process) {
  const SpawnedProcess p = spawner_.spawn(process.spec);
  const std::string prefix = "[" + process.label + "] ";
  ProcessOutcome outcome;
  outcome.label = process.label;
  outcome.role = process.role;
  outcome.host = process.spec.host;
  outcome.remote = process.spec.remote;
  outcome.start_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  children_.push_back(Child{process.label, process.role, p.pid, p.stdin_fd, p.stdin_fd >= 0, true, false,
                            LineRelay(p.out_fd, STDOUT_FILENO, prefix), LineRelay(p.err_fd, STDERR_FILENO, prefix),
                            outcome, Clock::now()});
}

std::vector<ProcessOutcome> Supervisor::outcomes() const {
  std::vector<ProcessOutcome> all;
  for (const Child& c : children_) all.push_back(c.outcome);
  return all;
}

bool Supervisor::wait_until(const std::function<bool()>& done, Clock::time_point deadline) {
  for (;;) {
    if (done()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    // Capped so that a missed wakeup costs at most a second.
    poll_once(std::min<Clock::duration>(deadline - now, std::chrono::seconds(1)));
  }
}

void Supervisor::poll_once(Clock::duration timeout) {
  std::vector<pollfd> fds{{signals_.fd(), POLLIN, 0}};
  std::vector<LineRelay*> relays;
  for (Child& c : children_)
    for (LineRelay* r : {&c.out, &c.err})
      if (r->open()) {
        fds.push_back({r->fd(), POLLIN, 0});
        relays.push_back(r);
      }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  if (::poll(fds.data(), fds.size(), static_cast<int>(ms)) < 0 && errno != EINTR)
    fail("poll failed: {}", std::strerror(errno));
  for (size_t i = 1; i < fds.size(); ++i)
    if (fds[i].revents != 0) relays[i - 1]->pump();
  for (int sig : signals_.take()) on_signal(sig);
  reap();  // SIGCHLD only wakes us; reaping every time is cheap and cannot miss
}

void Supervisor::reap() {
  for (;;) {
    int status = 0;
    struct rusage usage {};
    const pid_t pid = ::wait4(-1, &status, WNOHANG, &usage);
    if (pid <= 0) return;
    auto it = std::find_if(children_.begin(), children_.end(), [pid](const Child& c) { return c.pid == pid; });
    if (it == children_.end()) continue;  // an orphan a shell left to us
    it->running = false;
    // What it wrote before exiting comes before the launcher's word on it.
    it->out.pump();
    it->err.pump();
    on_exit(*it, status, usage);
  }
}

void Supervisor::on_exit(Child& child, int status, const ::rusage& usage) {
  const bool signaled = WIFSIGNALED(status);
  const int code = signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  child.outcome.exit_code = code;
  child.outcome.stopped = stopping_;
  child.outcome.duration_s = std::chrono::duration<double>(Clock::now() - child.started).count();
  if (!child.remote) child.outcome.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  if (code == 0 || stopping_) return;
  if (signaled) say("{} was killed by signal {}", child.label, signal_name(WTERMSIG(status)));
  else if (child.remote && code == 255) say("{} exited with code 255: its ssh connection failed or was cut", child.label);
  else say("{} exited with code {}", child.label, code);
  if (first_failure_ < 0 && interrupt_ == 0) {
    first_failure_ = code;
    say("stopping the job in {:g}s (--grace)", options_.grace_s);
  }
}

void Supervisor::on_signal(int sig) {
  if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP) return;
  ++signals_seen_;
  if (interrupt_ != 0 || stopping_) return;
  interrupt_ = sig;
  say("got {}; stopping the job", signal_name(sig));
}

bool Supervisor::any_running(bool servers, bool trainers) const {
  return std::any_of(children_.begin(), children_.end(), [&](const Child& c) {
    return c.running && (c.role == job::Role::kServer ? servers : trainers);
  });
}

bool Supervisor::all_gone() {
  reap();
  bool gone = true;
  for (Child& c : children_) {
    // The group id cannot be reused while any member (or the unreaped
    // leader) exists, so ESRCH means it is really empty.
    if (!c.group_gone && ::kill(-c.pid, 0) != 0 && errno == ESRCH) c.group_gone = true;
    gone = gone && !c.running && c.group_gone;
  }
  return gone;
}

void Supervisor::signal_groups(int sig, bool local_only) {
  for (Child& c : children_)
    if (!c.group_gone && !(local_only && c.remote) && ::kill(-c.pid, sig) != 0 && errno == ESRCH)
      c.group_gone = true;
}

void Supervisor::close_stdins() {
  for (Child& c : children_)
    if (c.stdin_fd >= 0) {
      ::close(c.stdin_fd);
      c.stdin_fd = -1;
    }
}

void Supervisor::stop_all() {
  stopping_ = true;
  if (!all_gone()) {
    const auto left = std::count_if(children_.begin(), children_.end(), [](const Child& c) { return !c.group_gone; });
    const bool any_remote = std::any_of(children_.begin(), children_.end(), [](const Child& c) { return c.remote; });
    const double wait_s = options_.term_wait_s + (any_remote ? options_.remote_stop_extra_s : 0);
    say("stopping {} process group(s): SIGTERM{}, then SIGKILL after {:g}s", left,
        any_remote ? " (remote ones: hang up their ssh stdin)" : "", wait_s);
    close_stdins();
    signal_groups(SIGTERM, true);
    const int seen = signals_seen_;
    // Another Ctrl-C means "now".
    const bool stopped = wait_until([&] { return signals_seen_ > seen || all_gone(); }, after(wait_s));
    if (!stopped || !all_gone()) {
      for (const Child& c : children_)
        if (!c.group_gone) say("{} did not stop after SIGTERM; sending SIGKILL", c.label);
      signal_groups(SIGKILL, false);
      for (const Child& c : children_)
        if (c.running) ::kill(c.pid, SIGKILL);  // in case it left its group
      // SIGKILL cannot be ignored: waiting for our own children cannot hang.
      for (Child& c : children_) {
        int status = 0;
        struct rusage usage {};
        if (c.running && ::wait4(c.pid, &status, 0, &usage) == c.pid) {
          c.running = false;
          on_exit(c, status, usage);
        }
      }
      wait_until([&] { return all_gone(); }, after(1));
    }
  }
  // Everything that held the pipes is gone; take the last lines.
  const auto relays_closed = [this] {
    return std::none_of(children_.begin(), children_.end(), [](const Child& c) { return c.out.open() || c.err.open(); });
  };
  wait_until(relays_closed, after(1));
  for (Child& c : children_) {
    c.out.finish();
    c.err.finish();
  }
}

}  // namespace tessera::launch
