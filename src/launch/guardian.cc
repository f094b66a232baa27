#include "guardian.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "job_plan.h"
#include "tessera/store/shared_memory.h"
#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

constexpr pid_t kGoodbye = 0;

bool read_pid(int fd, pid_t* pid) {
  size_t done = 0;
  while (done < sizeof(*pid)) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(pid) + done, sizeof(*pid) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void guard(int fd, const std::string& job_id) {
  std::vector<pid_t> groups;
  pid_t pid;
  while (read_pid(fd, &pid)) {
    if (pid == kGoodbye) ::_exit(0);
    groups.push_back(pid);
  }
  // The launcher is gone without a goodbye.
  for (pid_t group : groups) ::kill(-group, SIGKILL);
  // Let the killed processes die before removing what they made (up to 1 s).
  for (int i = 0; i < 100; ++i) {
    bool any = false;
    for (pid_t group : groups) any = any || ::kill(-group, 0) == 0;
    if (!any) break;
    ::usleep(10000);
  }
  store::remove_job_segments(job_id);
  ::unlink(local_key_file(job_id).c_str());
  ::_exit(0);
}

}  // namespace

Guardian::Guardian(const std::string& job_id) {
  // A socket rather than a pipe: send() with MSG_NOSIGNAL cannot raise
  // SIGPIPE in the launcher if the guardian is gone.
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    fail("cannot create a socket pair: {}", std::strerror(errno));
  pid_ = ::fork();
  if (pid_ == 0) {
    ::close(fds[1]);
    // Its own group and no handlers: Ctrl-C in the terminal and the
    // launcher's signal handling are not for it; only the socket ends it.
    ::setpgid(0, 0);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Holding the launcher's stdout would keep a reader of it waiting.
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
    guard(fds[0], job_id);
  }
  const int fork_errno = errno;
  ::close(fds[0]);
  if (pid_ < 0) {
    ::close(fds[1]);
    fail("cannot start the launcher's guardian: fork: {}", std::strerror(fork_errno));
  }
  fd_ = fds[1];
}

Guardian::~Guardian() {
  watch(kGoodbye);
  ::close(fd_);
  // ECHILD when the supervisor's reaping got it first: also fine.
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

void Guardian::watch(pid_t process_group) {
  // Four bytes on a local stream socket go in one piece; if the guardian is
  // gone there is nothing better to do than carry on.
  const ssize_t unused = ::send(fd_, &process_group, sizeof(process_group), MSG_NOSIGNAL);
  (void)unused;
}

}  // namespace tessera::launch
