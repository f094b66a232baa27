// tessera::distributed::initialize(): the entry of every distributed program. In a server role (set by the
// launcher) it serves its partition and exits the process (std::exit) when the job ends; in a trainer role it
// joins the job and returns a Context; with no role (or standalone requested) it loads a 1-partition graph
// in-process, with no servers, for development. It also sets the intra-op thread count and malloc thresholds.
//
// The caller owns the Context, and it must outlive every DistTensor, DistGraph, loader and optimizer made from
// it; references it returns (config(), book(), local(), collectives(), client()) live as long as it does. One
// Context per process, used by the thread that created it: its client() and collectives() belong to that thread;
// another thread talks to the servers through its own connect(). finalize() (and the destructor, unless an
// exception is unwinding) is collective: a barrier, then trainer 0 shuts the servers down. After finalize() or
// abandon(), client(), connect() and barrier() fail, and handles made from the Context (a DistTensor going out
// of scope) leave the servers alone; the object itself must still outlive them. Errors are
// tessera::Error naming the flag, file or variable at fault (a --part-config or --ip-config other than the
// launcher's, a config that does not match the job); local() and local_locks() fail where there is none.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tessera/distributed/collectives.h"
#include "tessera/job/job_env.h"
#include "tessera/partition/partition_book.h"
#include "tessera/partition/partition_config.h"
#include "tessera/store/partition_store.h"
#include "tessera/store/shared_memory.h"

// The transport and the row locks are internal: a Context hands them to the
// library's own parts, and user code never needs their definitions.
namespace tessera::net {
class Client;
struct ServerAddress;
struct Security;
}  // namespace tessera::net
namespace tessera::store {
class RowLocks;
}  // namespace tessera::store

namespace tessera::job {
class Rendezvous;
}

namespace tessera::distributed {


struct InitOptions {
  bool standalone = false;   // force standalone even if TESSERA_ROLE is set
  std::string part_config;   // standalone: the 1-partition config to load; launched: must be the launcher's
  std::string ip_config;     // launched: must be the launcher's (checked, then the launcher's is used)
  // Intra-op threads. 0: TESSERA_NUM_THREADS or OMP_NUM_THREADS if set
  // (threads_from_environment); else, in a launched
  // trainer, half the host's cores over the trainers on that host (at least
  // 1, DGL's rule), in a standalone process half the host's cores (it is the
  // host's one trainer); else 2.
  int num_threads = 0;
};

class Context {
 public:
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const job::JobEnv& env() const { return env_; }
  bool standalone() const { return env_.role == job::Role::kStandalone; }
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
  const std::string& part_config_path() const;  // the file config() came from
  const PartitionBook& book() const { return book_; }
  store::PartitionStore& local();  // fails on a client machine
  Collectives& collectives() { return *collectives_; }
  // A group of this job's trainers with a ring of its own, for collectives
  // called in another order or from another thread than collectives()'s
  // (torch.distributed's "tessera" backend). Collective: every trainer
  // calls it with the same `name`.
  std::unique_ptr<Collectives> new_collectives(const std::string& name);
  job::Rendezvous* rendezvous() { return rendezvous_.get(); }
  // The calling thread's connection to the servers: the Context's own on the
  // thread that initialized it; on any other thread (a Python prefetch
  // thread, a user's), one of that thread's own, made on first use and kept
  // until the Context ends (ZeroMQ sockets belong to one thread).
  net::Client& client();
  // A connection of its own to every server, for another thread (ZeroMQ
  // sockets belong to one thread); indices match client()'s.
  std::unique_ptr<net::Client> connect() const;
  // The row locks of the local partition: this process's own when
  // standalone; on a machine that holds a partition, the servers' (in shared
  // memory), so that a trainer updates its machine's rows in place, as the
  // servers do, instead of sending them over a socket.
  store::RowLocks& local_locks();
  // Whether rows of partition `part` are written in place by this process.
  bool writes_in_place(int part) const { return local_locks_ != nullptr && part == local_part(); }

  // The server of partition `part` that this trainer sends requests to (the
  // trainers of a machine spread over its servers).
  // `k` rotates over the partition's servers (chunks of one request).
  int server_for(int part, size_t k = 0) const;
  bool finalized() const { return finalized_; }
  // A local tensor by name (mapping published tensors on first use), or null.
  store::LocalTensor* local_tensor(const std::string& name);

  void barrier();
  // Ends the job: a barrier, then trainer 0 shuts every server down.
  // The destructor calls it unless an exception is unwinding.
  void finalize();
  // Ends this process's part without the collective goodbye: after an error,
  // peers may be dead or waiting, and the launcher tears the job down.
  void abandon() { finalized_ = true; }
  // Fails, naming `what` (and `name`), once finalize() or abandon() ran.
  void check_not_finalized(const char* what, const std::string& name = "") const;

 private:
  friend std::unique_ptr<Context> initialize(const InitOptions& options);
  Context() = default;
  void join_job();
  void open_standalone(const std::string& part_config);
  // The calling thread's connection if it has one (client() makes one).
  net::Client* existing_client();

  job::JobEnv env_;
  PartitionConfig config_;
  PartitionBook book_{PartitionConfig{}};
  std::unique_ptr<store::PartitionStore> local_;
  std::unique_ptr<job::Rendezvous> rendezvous_;
  std::unique_ptr<Collectives> collectives_;
  std::string my_ip_;  // this machine's ip_config address, where collectives listen
  std::unique_ptr<net::Client> client_;
  std::thread::id owner_thread_ = std::this_thread::get_id();
  std::mutex threads_mutex_;  // guards thread_clients_ and the local tensor map
  std::map<std::thread::id, std::unique_ptr<net::Client>> thread_clients_;
  std::vector<net::ServerAddress> addresses_;
  std::shared_ptr<const net::Security> security_;  // the job's keys, for connect()
  std::vector<std::vector<int>> servers_;  // [part][server] -> client index
  std::vector<uint32_t> standalone_locks_;
  store::SharedMemory machine_locks_;  // the servers' locks, on a machine holding a partition
  std::unique_ptr<store::RowLocks> local_locks_;
  bool finalized_ = false;
  std::string part_config_path_;
};

// Reads the role from the environment. Server role: runs the server and
// calls std::exit with its code. Errors throw tessera::Error.
std::unique_ptr<Context> initialize(const InitOptions& options = {});

}  // namespace tessera::distributed
