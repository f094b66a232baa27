// tessera::dist::initialize(): the entry of every distributed program. In a
// server role (set by the launcher) it serves its partition and exits the
// process when the job ends; in a trainer role it joins the job and returns a
// Context; with no role (or standalone requested) it loads a 1-partition
// graph in-process, with no servers, for development.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/dist/job_env.h"
#include "tessera/dist/rendezvous.h"
#include "tessera/net/transport.h"
#include "tessera/partition/partition_book.h"
#include "tessera/partition/partition_config.h"
#include "tessera/store/partition_store.h"
#include "tessera/store/row_locks.h"

namespace tessera::dist {

struct InitOptions {
  bool standalone = false;   // force standalone even if TESSERA_ROLE is set
  std::string part_config;   // standalone: the 1-partition config to load
  int num_threads = 0;       // intra-op threads (0: TESSERA_NUM_THREADS or 2)
};

class Context {
 public:
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const JobEnv& env() const { return env_; }
  bool standalone() const { return env_.role == Role::kStandalone; }
  int rank() const { return env_.rank(); }
  int world_size() const { return standalone() ? 1 : env_.world_size(); }
  int machine_id() const { return env_.machine_id; }
  int num_parts() const { return config_.num_parts; }
  // The partition whose arrays this process reads directly (its machine's),
  // or -1 on a client machine (server-client mode), which holds none and
  // reaches every row and every sample through the servers.
  int local_part() const { return local_ ? local_->part() : -1; }
  bool has_local_part() const { return local_ != nullptr; }

  const PartitionConfig& config() const { return config_; }
  const PartitionBook& book() const { return book_; }
  store::PartitionStore& local();  // fails on a client machine
  Collectives& collectives() { return *collectives_; }
  Rendezvous* rendezvous() { return rendezvous_.get(); }
  net::Client& client();
  // A connection of its own to every server, for another thread (ZeroMQ
  // sockets belong to one thread); indices match client()'s.
  std::unique_ptr<net::Client> connect() const;
  store::RowLocks& local_locks() { return local_locks_; }

  // The server of partition `part` that this trainer sends requests to (the
  // trainers of a machine spread over its servers).
  // `k` rotates over the partition's servers (chunks of one request).
  int server_for(int part, size_t k = 0) const;
  bool finalized() const { return finalized_; }
  // A local tensor by name (mapping published tensors on first use), or null.
  store::LocalTensor* local_tensor(const std::string& name);

  void barrier() { collectives_->barrier(); }
  // Ends the job: a barrier, then trainer 0 shuts every server down.
  // The destructor calls it unless an exception is unwinding.
  void finalize();

 private:
  friend std::unique_ptr<Context> initialize(const InitOptions& options);
  Context() = default;
  void join_job();
  void open_standalone(const std::string& part_config);

  JobEnv env_;
  PartitionConfig config_;
  PartitionBook book_{PartitionConfig{}};
  std::unique_ptr<store::PartitionStore> local_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::unique_ptr<Collectives> collectives_;
  std::unique_ptr<net::Client> client_;
  std::vector<net::ServerAddress> addresses_;
  std::vector<std::vector<int>> servers_;  // [part][server] -> client index
  std::vector<uint32_t> standalone_locks_;
  store::RowLocks local_locks_;
  bool finalized_ = false;
};

// Reads the role from the environment. Server role: runs the server and
// calls std::exit with its code. Errors throw tessera::Error.
std::unique_ptr<Context> initialize(const InitOptions& options = {});

}  // namespace tessera::dist
