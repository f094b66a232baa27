#include "tessera/distributed/context.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tessera/job/ip_config.h"
#include "job/job_security.h"
#include "job/rendezvous.h"
#include "server/partition_server.h"
#include "net/transport.h"
#include "store/row_locks.h"
#include "job/tensor_registry.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "tessera/base/threads.h"

namespace tessera::distributed {
namespace {

// Longest wait for one reply from a live server: generous, since a server
// may be busy with other trainers' batches; a dead one is noticed at once.
constexpr int kRequestTimeoutS = 300;

// A program given a file by flag under the launcher uses the launcher's: the
// two must be the same file, or the program would read one graph while the
// servers serve another.
void check_same_file(const char* flag, const std::string& given, const std::string& launchers) {
  if (given.empty()) return;
  std::error_code ec;
  if (!std::filesystem::exists(given, ec))
    fail("{} {}: no such file (relative paths start at the workspace, {})", flag, given,
         std::filesystem::current_path(ec).string());
  if (!std::filesystem::equivalent(given, launchers, ec))
    fail("{} {} is not the file the launcher gave this job ({}): drop the flag, or launch with that file", flag, given,
         launchers);
}

// A trainer's intra-op threads when neither its flag nor the environment
// (TESSERA_NUM_THREADS, OMP_NUM_THREADS) says: half the host's cores shared
// among the trainers on it, at least 1, as DGL's launcher sets
// OMP_NUM_THREADS. The other half goes to sampler threads and servers.
// Machines on one IP share a host; a standalone process is its host's one
// trainer. Measured on 2 cores: bench/sage.sh (b), 2 trainers + 2
// servers, 1 thread each ran 112-136 mini-batches/s summed, 2 threads each
// 89; standalone `train sage` with 1 sampler thread, 1 thread 203-206/s,
// 2 threads 106-109/s (OpenMP's idle workers spin on the core the sampler
// and OpenBLAS's pool need). Servers keep set_num_threads' default.
int default_trainer_threads(const job::JobEnv& env, bool standalone) {
  if (threads_from_environment() > 0) return 0;
  int trainers_here = 1;
  if (!standalone) {
    if (env.role != job::Role::kTrainer) return 0;
    const std::vector<job::MachineAddress> machines = job::read_ip_config(env.ip_config, env.num_servers);
    trainers_here = 0;
    for (int m = 0; m < static_cast<int>(machines.size()); ++m)
      if (machines[m].ip == machines.at(env.machine_id).ip) trainers_here += env.trainers_on(m);
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / 2 / std::max(1, trainers_here));
}

}  // namespace

const std::string& Context::part_config_path() const { return part_config_path_; }

store::RowLocks& Context::local_locks() {
  if (!local_locks_) fail("row locks are held by the servers: a client machine's trainers update rows through them");
  return *local_locks_;
}

std::unique_ptr<Context> initialize(const InitOptions& options) {
  // Row buffers of a few MiB come and go with every request. By default
  // glibc maps each one fresh and the kernel zero-fills its pages on first
  // touch, an extra pass over every byte pulled; keep them in the heap.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  job::JobEnv env = job::JobEnv::from_environment();
  const bool standalone = options.standalone || env.role == job::Role::kStandalone;
  set_num_threads(options.num_threads > 0 ? options.num_threads : default_trainer_threads(env, standalone));
  if (!standalone) {
    check_same_file("--part-config", options.part_config, env.part_config);
    check_same_file("--ip-config", options.ip_config, env.ip_config);
  }
  if (env.role == job::Role::kServer && !options.standalone) {
    std::fflush(stdout);
    std::exit(server::run_server(env));
  }
  std::unique_ptr<Context> ctx(new Context());
  if (standalone) {
    if (!options.ip_config.empty())
      fail("--ip-config {}: a standalone process has no servers to reach (drop the flag, or run under tessera launch)",
           options.ip_config);
    ctx->env_ = job::JobEnv{};
    ctx->part_config_path_ = options.part_config.empty() ? env.part_config : options.part_config;
    ctx->open_standalone(ctx->part_config_path_);
  } else {
    ctx->env_ = env;
    ctx->part_config_path_ = env.part_config;
    ctx->join_job();
  }
  return ctx;
}

void Context::open_standalone(const std::string& part_config) {
  if (part_config.empty())
    fail("standalone mode needs a partition config (--part-config, a 1-partition <graph>.json)");
  config_ = PartitionConfig::load(part_config);
  if (config_.num_parts != 1)
    fail("{} has {} partitions; standalone mode runs on a 1-partition graph (tessera partition --num-parts 1)",
         part_config, config_.num_parts);
  book_ = PartitionBook(config_);
  local_ = std::make_unique<store::PartitionStore>(config_, book_, 0);
  collectives_ = std::make_unique<Collectives>(nullptr, "", 0, 1, "", 0);
  standalone_locks_.assign(store::RowLocks::kStripes, 0);
  local_locks_ = std::make_unique<store::RowLocks>(standalone_locks_.data());
}

void Context::join_job() {
  config_ = PartitionConfig::load(env_.part_config);
  const std::vector<job::MachineAddress> machines = job::read_ip_config(env_.ip_config, env_.num_servers);
  if (static_cast<int>(machines.size()) != env_.num_machines || config_.num_parts != env_.server_machines())
    fail("{} has {} partitions and {} lists {} machines; the job runs {} machines, {} of them holding partitions",
         env_.part_config, config_.num_parts, env_.ip_config, machines.size(), env_.num_machines,
         env_.server_machines());
  book_ = PartitionBook(config_);
  security_ = std::make_shared<const net::Security>(job::job_security(env_));
  rendezvous_ = std::make_unique<job::Rendezvous>(env_.master_addr, env_.master_port, false, env_.timeout_s, *security_);
  // Servers first: their addresses are in the store once they listen.
  const int total_servers = env_.server_machines() * env_.num_servers;
  rendezvous_->wait_count("servers_up", total_servers);
  std::vector<net::ServerAddress> addresses;
  servers_.assign(env_.server_machines(), {});
  for (int m = 0; m < env_.server_machines(); ++m)
    for (int s = 0; s < env_.num_servers; ++s) {
      servers_[m].push_back(static_cast<int>(addresses.size()));
      addresses.push_back({fmt::format("m{}/server/{}", m, s), rendezvous_->get(fmt::format("server/{}/{}", m, s))});
    }
  addresses_ = addresses;
  client_ = std::make_unique<net::Client>(std::move(addresses), kRequestTimeoutS, *security_, env_.timeout_s);
  if (env_.holds_partition(env_.machine_id)) {
    local_ = std::make_unique<store::PartitionStore>(config_, book_, env_.machine_id);
    const std::string segment_prefix = rendezvous_->get(job::segment_prefix_key(env_.machine_id));
    machine_locks_ = store::SharedMemory::attach(segment_prefix + "locks");
    local_locks_ = std::make_unique<store::RowLocks>(machine_locks_.data());
    // A server killed inside a section leaves its stripe held: a trainer
    // waiting for it fails naming that server once its connection closes,
    // not after RowLocks' 10 s with no name.
    local_locks_->check_while_waiting([this] {
      if (net::Client* mine = existing_client()) mine->check_servers();
    });
  }
  my_ip_ = machines[env_.machine_id].ip;
  collectives_ = std::make_unique<Collectives>(rendezvous_.get(), "trainers/", env_.rank(), env_.world_size(), my_ip_,
                                               env_.timeout_s);
}

std::unique_ptr<Collectives> Context::new_collectives(const std::string& name) {
  if (standalone()) return std::make_unique<Collectives>(nullptr, "", 0, 1, "", 0);
  return std::make_unique<Collectives>(rendezvous_.get(), "groups/" + name + "/", env_.rank(), env_.world_size(),
                                       my_ip_, env_.timeout_s);
}

Context::~Context() {
  // Unwinding from an error: peers may be dead, so no collective calls.
  if (std::uncaught_exceptions() > 0) return;
  try {
    finalize();
  } catch (const std::exception& e) {
    fmt::print(stderr, "trainer {}: error while finishing: {}\n", env_.label(), describe(e));
  }
}

net::Client& Context::client() {
  check_not_finalized("a request to the servers");
  if (!client_) fail("internal: no servers in standalone mode");
  const std::thread::id self = std::this_thread::get_id();
  if (self == owner_thread_) return *client_;
  std::lock_guard<std::mutex> lock(threads_mutex_);
  std::unique_ptr<net::Client>& mine = thread_clients_[self];
  if (!mine) mine = connect();
  return *mine;
}

net::Client* Context::existing_client() {
  if (std::this_thread::get_id() == owner_thread_) return client_.get();
  std::lock_guard<std::mutex> lock(threads_mutex_);
  const auto mine = thread_clients_.find(std::this_thread::get_id());
  return mine == thread_clients_.end() ? nullptr : mine->second.get();
}

std::unique_ptr<net::Client> Context::connect() const {
  check_not_finalized("a connection to the servers");
  if (standalone()) return nullptr;
  return std::make_unique<net::Client>(addresses_, kRequestTimeoutS, *security_, env_.timeout_s);
}

void Context::barrier() {
  check_not_finalized("a barrier");
  collectives_->barrier();
}

void Context::check_not_finalized(const char* what, const std::string& name) const {
  if (finalized_)
    fail("{}{}{}: this process already left the job (finalize() / exit_client(), or an error); its servers may be "
         "gone", what, name.empty() ? "" : " ", name);
}

int Context::server_for(int part, size_t k) const {
  const auto& servers = servers_.at(part);
  return servers[(env_.trainer_id + k) % servers.size()];
}

store::PartitionStore& Context::local() {
  if (!local_) fail("internal: machine {} is a client and holds no partition", env_.machine_id);
  return *local_;
}

store::LocalTensor* Context::local_tensor(const std::string& name) {
  check_not_finalized("tensor", name);  // a bool test on the hot path; the text only on failure
  if (!local_) return nullptr;
  std::lock_guard<std::mutex> lock(threads_mutex_);
  return job::resolve_tensor(*local_, rendezvous_.get(), env_.machine_id, name);
}

void Context::finalize() {
  if (finalized_) return;
  finalized_ = true;
  if (standalone()) return;
  collectives_->barrier();
  if (rank() == 0) client_->send_farewell(server::kShutdown);
  // Every trainer reports its footprint, as the servers do when they stop.
  fmt::print(stderr, "trainer {}: finished (peak RSS {:.0f} MB)\n", env_.label(), peak_rss_bytes() / 1e6);
}

}  // namespace tessera::distributed
