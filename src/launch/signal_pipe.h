// The self-pipe trick: signal handlers only write the signal's number into a
// pipe that the launcher's poll() loop watches, so a signal can never slip in
// between checking for work and going to sleep.
#pragma once

#include <signal.h>

#include <vector>

namespace tessera::launch {

class SignalPipe {
 public:
  // Catches SIGINT, SIGTERM, SIGHUP and SIGCHLD and ignores SIGPIPE (a closed
  // log reader must not kill the launcher before it cleans up). One at a time.
  SignalPipe();
  ~SignalPipe();  // restores the previous dispositions
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  int fd() const { return read_fd_; }  // readable when a signal arrived
  // Signals received since the last call, in order (drains the pipe).
  std::vector<int> take();

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
  int read_fd_ = -1;
  struct sigaction saved_[sizeof(kSignals) / sizeof(kSignals[0])];
};

}  // namespace tessera::launch
