// What a partition server's services may use (DGL's ServerState): the job,
// the partition it serves, its row locks and the rendezvous store, and the
// registry its services join. One ServerState per server process; only
// the server's thread touches it.
//
// Internal header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "job/rendezvous.h"
#include "net/service_registry.h"
#include "store/row_locks.h"
#include "tessera/job/job_env.h"
#include "tessera/partition/partition_book.h"
#include "tessera/store/partition_store.h"
#include "tessera/store/shared_memory.h"

namespace tessera::server {

// Shared-memory segments a main server created, unlinked when it goes,
// also when its constructor fails halfway.
struct OwnedSegments {
  std::vector<std::string> names;
  ~OwnedSegments();
  void forget(const std::string& name);
};

struct ServerState {
  explicit ServerState(const job::JobEnv& job_env);

  // A tensor of this partition by name (published ones mapped on first use);
  // throws tessera::Error naming the tensor when there is none.
  store::LocalTensor& tensor(const std::string& name);
  bool main() const { return env.server_id == 0; }

  job::JobEnv env;
  std::string who;  // "server m0-0", for errors
  PartitionConfig config;
  PartitionBook book;
  std::unique_ptr<job::Rendezvous> rendezvous;
  std::unique_ptr<store::PartitionStore> partition;
  store::SharedMemory locks_memory;
  store::RowLocks locks;
  std::string segment_prefix;  // of the shared segments of this machine's tensors
  OwnedSegments owned_segments;
  bool running = true;  // false: the server stops after this reply
};

// The services of partition servers; every part registers its own:
//   net::ServiceRegistry<ServerState>& r = partition_services();
//   const bool kRegistered = r.add(kMyRequest, "my service", handler);
net::ServiceRegistry<ServerState>& partition_services();

}  // namespace tessera::server
