// Small process helpers shared by the staging-directory and shared-memory
// cleanups and by the launcher.
#pragma once

#include <sys/types.h>

namespace tessera {

// Whether `pid` runs; a zombie (killed, not yet reaped) counts as dead, since
// it will never release what it named after itself.
bool process_alive(pid_t pid);

}  // namespace tessera
