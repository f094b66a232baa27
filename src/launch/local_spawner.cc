#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "launch/spawner.h"
#include "tessera/base/error.h"

extern char** environ;

namespace tessera::launch {
namespace {

// Only async-signal-safe calls are allowed between fork and exec.
[[noreturn]] void child_fail(const char* what, const char* detail = "") {
  const char* reason = std::strerror(errno);
  for (const char* s : {"tessera launch: ", what, detail, ": ", reason, "\n"}) {
    const ssize_t unused = ::write(STDERR_FILENO, s, std::strlen(s));
    (void)unused;
  }
  ::_exit(127);
}

// "NAME=value" strings: the launcher's environment minus spec.unset, with
// spec.env set on top.
std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::set<std::string> drop(spec.unset.begin(), spec.unset.end());
  for (const auto& [name, value] : spec.env) drop.insert(name);
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (drop.count(entry.substr(0, entry.find('='))) == 0) vars.push_back(entry);
  }
  for (const auto& [name, value] : spec.env) vars.push_back(name + "=" + value);
  return vars;
}

class LocalSpawner : public Spawner {
 public:
  SpawnedProcess spawn(const ProcessSpec& spec) override {
    // Everything the child needs is built before fork: it may not allocate.
    const std::vector<std::string> env_strings = child_environment(spec);
    std::vector<char*> envp;
    for (const auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
    envp.push_back(nullptr);
    const char* argv[] = {"/bin/sh", "-c", spec.command.c_str(), nullptr};

    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0) fail("cannot create a pipe: {}", std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0 || (spec.stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0)) {
      const int e = errno;
      for (int fd : {out[0], out[1], err[0], err[1], in[0], in[1]})
        if (fd >= 0) ::close(fd);
      fail("cannot create a pipe: {}", std::strerror(e));
    }

    // Signals stay blocked across fork so the launcher's handlers never run
    // in the child; the child resets them before unblocking.
    sigset_t all, old;
    ::sigfillset(&all);
    ::sigprocmask(SIG_BLOCK, &all, &old);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);  // SIGPIPE was ignored
      if (::setpgid(0, 0) != 0) child_fail("setpgid");
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail("prctl");
      // The launcher may have died before prctl took effect.
      if (::getppid() != parent) ::_exit(127);
      // No terminal input in a background group: a pipe or /dev/null.
      const int in_fd = in[0] >= 0 ? in[0] : ::open("/dev/null", O_RDONLY);
      if (in_fd < 0 || ::dup2(in_fd, STDIN_FILENO) < 0) child_fail("stdin");
      if (::dup2(out[1], STDOUT_FILENO) < 0 || ::dup2(err[1], STDERR_FILENO) < 0) child_fail("dup2");
      if (::chdir(spec.workdir.c_str()) != 0) child_fail("cannot enter ", spec.workdir.c_str());
      ::sigprocmask(SIG_SETMASK, &old, nullptr);
      ::execve(argv[0], const_cast<char* const*>(argv), envp.data());
      child_fail("cannot run /bin/sh");
    }
    const int fork_errno = errno;
    // Also set the group here: the launcher may signal the group before the
    // child gets to run. EACCES (child already exec'd) is fine.
    if (pid > 0) ::setpgid(pid, pid);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::close(out[1]);
    ::close(err[1]);
    if (in[0] >= 0) ::close(in[0]);
    if (pid < 0) {
      ::close(out[0]);
      ::close(err[0]);
      if (in[1] >= 0) ::close(in[1]);
      fail("cannot start a process: fork: {}", std::strerror(fork_errno));
    }
    ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
    ::fcntl(err[0], F_SETFL, ::fcntl(err[0], F_GETFL) | O_NONBLOCK);
    return SpawnedProcess{pid, out[0], err[0], in[1]};
  }
};

}  // namespace

std::unique_ptr<Spawner> make_local_spawner() { return std::make_unique<LocalSpawner>(); }

}  // namespace tessera::launch
