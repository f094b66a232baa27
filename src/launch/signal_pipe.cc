#include "signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tessera/base/error.h"

namespace tessera::launch {
namespace {

int g_write_fd = -1;  // the handler's only state

void on_signal(int sig) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  const ssize_t unused = ::write(g_write_fd, &byte, 1);  // full pipe: a wakeup is pending anyway
  (void)unused;
  errno = saved_errno;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (g_write_fd >= 0) fail("internal: a SignalPipe already exists");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) fail("cannot create a pipe: {}", std::strerror(errno));
  read_fd_ = fds[0];
  g_write_fd = fds[1];
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction action {};
    action.sa_handler = kSignals[i] == SIGPIPE ? SIG_IGN : on_signal;
    ::sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | (kSignals[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
    ::sigaction(kSignals[i], &action, &saved_[i]);
  }
}

SignalPipe::~SignalPipe() {
  for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
  ::close(read_fd_);
  ::close(g_write_fd);
  g_write_fd = -1;
}

std::vector<int> SignalPipe::take() {
  std::vector<int> signals;
  unsigned char buf[64];
  ssize_t n;
  while ((n = ::read(read_fd_, buf, sizeof(buf))) > 0) signals.insert(signals.end(), buf, buf + n);
  return signals;
}

}  // namespace tessera::launch
