// Small process helpers shared by the staging-directory and shared-memory cleanups and by the launcher.
// process_alive() only reads (kill(pid, 0) and /proc/<pid>/stat), holds no state, is safe to call from any
// thread and throws nothing; when /proc cannot be read for a pid that kill() does not rule out, it answers true.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tessera {

// Whether `pid` runs; a zombie (killed, not yet reaped) counts as dead, since
// it will never release what it named after itself.
bool process_alive(pid_t pid);

// This process's arguments, argv[0] first, as /proc/self/cmdline holds them
// (what a run record shows as its command line); empty if it cannot be read.
std::vector<std::string> process_arguments();

// This machine's host name (gethostname); "" if it has none.
std::string host_name();

}  // namespace tessera
