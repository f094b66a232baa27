#include "parallel_commands.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "launch/spawner.h"
#include "base/progress.h"
#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

struct Running {
  SpawnedProcess process;
  CommandOutcome* outcome;
  bool exited = false;
};

// Appends what is readable; closes the descriptor at end of stream.
void drain(int* fd, std::string* into) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(*fd, buffer, sizeof(buffer));
    if (n > 0) {
      into->append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    ::close(*fd);
    *fd = -1;
    return;
  }
}

void record_exit(Running& r, int status) {
  r.exited = true;
  r.outcome->exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

std::vector<CommandOutcome> run_in_parallel(const std::vector<std::string>& command_lines, double timeout_s,
                                            Progress* done) {
  std::vector<CommandOutcome> outcomes(command_lines.size());
  auto spawner = make_local_spawner();
  std::vector<Running> running;
  running.reserve(command_lines.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  try {
    for (size_t i = 0; i < command_lines.size(); ++i) {
      ProcessSpec spec;
      spec.workdir = ".";
      spec.command = command_lines[i];
      running.push_back({spawner->spawn(spec), &outcomes[i]});
    }
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<std::pair<int*, std::string*>> targets;
      bool pending = false;
      for (Running& r : running) {
        for (auto [fd, text] : {std::pair{&r.process.out_fd, &r.outcome->out}, std::pair{&r.process.err_fd, &r.outcome->err}})
          if (*fd >= 0) {
            fds.push_back({*fd, POLLIN, 0});
            targets.emplace_back(fd, text);
          }
        if (!r.exited) {
          int status = 0;
          if (::waitpid(r.process.pid, &status, WNOHANG) == r.process.pid) {
            record_exit(r, status);
            if (done != nullptr) done->add(1);
          }
        }
        pending = pending || !r.exited || r.process.out_fd >= 0 || r.process.err_fd >= 0;
      }
      if (!pending) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        for (Running& r : running)
          if (!r.exited || r.process.out_fd >= 0 || r.process.err_fd >= 0) {
            r.outcome->timed_out = true;
            ::kill(-r.process.pid, SIGKILL);
          }
        break;
      }
      // Short polls: a process that exits without closing its pipes (its
      // children hold them) is noticed by waitpid above.
      ::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left.count(), 100)));
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents != 0) drain(targets[i].first, targets[i].second);
    }
  } catch (...) {
    for (Running& r : running) ::kill(-r.process.pid, SIGKILL);
    for (Running& r : running)
      if (!r.exited) ::waitpid(r.process.pid, nullptr, 0);
    throw;
  }
  for (Running& r : running) {
    if (!r.exited) {
      int status = 0;
      if (::waitpid(r.process.pid, &status, 0) == r.process.pid) record_exit(r, status);
    }
    for (int fd : {r.process.out_fd, r.process.err_fd})
      if (fd >= 0) ::close(fd);
  }
  return outcomes;
}

}  // namespace tessera::launch
