// Cleans up after a launcher that died without doing so (SIGKILL, the OOM
// killer). PR_SET_PDEATHSIG reaches only the shells the launcher starts, and
// /bin/sh forks even a simple command rather than exec it, so the programs
// themselves would live on as orphans. The guardian is a small forked process
// that outlives the launcher: it learns each process group as it starts, and
// when its socket from the launcher closes without a goodbye, it SIGKILLs
// those groups and removes the job's shared memory.
#pragma once

#include <sys/types.h>

#include <string>

#include "launch/spawner.h"

namespace tessera::launch {

class Guardian {
 public:
  // Forks the guardian; do this before any job process starts.
  explicit Guardian(const std::string& job_id);
  // The normal end: tells the guardian to exit without acting, and reaps it.
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  void watch(pid_t process_group);

 private:
  pid_t pid_ = -1;
  int fd_ = -1;  // our end of the socket the guardian reads
};

// Registers every process group it starts with a guardian.
class GuardedSpawner : public Spawner {
 public:
  GuardedSpawner(Spawner& inner, Guardian& guardian) : inner_(inner), guardian_(guardian) {}
  SpawnedProcess spawn(const ProcessSpec& spec) override {
    const SpawnedProcess p = inner_.spawn(spec);
    guardian_.watch(p.pid);
    return p;
  }

 private:
  Spawner& inner_;
  Guardian& guardian_;
};

}  // namespace tessera::launch
