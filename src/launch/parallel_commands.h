// Runs a few local command lines at once (ssh checks, rsync copies, one per
// host) and collects each one's exit code and output, killing any that is
// still running at the deadline.
#pragma once

#include <string>
#include <vector>

namespace tessera {
class Progress;
}  // namespace tessera

namespace tessera::launch {

struct CommandOutcome {
  int exit_code = -1;  // 128 + signal when killed
  bool timed_out = false;
  std::string out, err;
};

// `done`, when given, counts the commands that have exited (a progress bar's count).
std::vector<CommandOutcome> run_in_parallel(const std::vector<std::string>& command_lines, double timeout_s,
                                            Progress* done = nullptr);

}  // namespace tessera::launch
