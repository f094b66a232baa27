#include "distributed/server.h"

#include <unistd.h>

#include <sys/mman.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "tessera/distributed/ip_config.h"
#include "distributed/job_security.h"
#include "distributed/rendezvous.h"
#include "distributed/services.h"
#include "distributed/tensor_registry.h"
#include "net/transport.h"
#include "tessera/partition/partition_book.h"
#include "tessera/store/partition_store.h"
#include "store/row_locks.h"
#include "tessera/store/shared_memory.h"
#include "tessera/store/sparse_step.h"
#include "store/tensor_ops.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera::distributed {
namespace {

using net::Header;
using net::MessageType;
using net::ProtocolError;

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// Segment names a main server created, unlinked when it goes, also when
// its constructor fails halfway.
struct OwnedSegments {
  std::vector<std::string> names;
  ~OwnedSegments() {
    for (const std::string& name : names) ::shm_unlink(name.c_str());
  }
};

class PartitionServer {
 public:
  explicit PartitionServer(const JobEnv& env);
  ~PartitionServer();
  void serve();

 private:
  void handle(net::Request& request);
  store::LocalTensor& tensor(const std::string& name);
  void create(net::Request& request);
  void remove(const std::string& name);

  JobEnv env_;
  std::string who_;
  PartitionConfig config_;
  PartitionBook book_;
  std::unique_ptr<Rendezvous> rendezvous_;
  std::unique_ptr<store::PartitionStore> partition_;
  store::SharedMemory locks_memory_;
  store::RowLocks locks_;
  std::string segment_prefix_;
  OwnedSegments owned_segments_;
  std::unique_ptr<net::ServerSocket> socket_;
  bool running_ = true;
};

PartitionServer::PartitionServer(const JobEnv& env)
    : env_(env), who_("server " + env.label()), config_(PartitionConfig::load(env.part_config)), book_(config_) {
  const std::vector<MachineAddress> machines = read_ip_config(env.ip_config, env.num_servers);
  if (static_cast<int>(machines.size()) != env.num_machines)
    fail("{} lists {} machines but the launcher started {}", env.ip_config, machines.size(), env.num_machines);
  if (config_.num_parts != env.server_machines())
    fail("{} has {} partitions but {} lists {} machines{}: partition the graph into one part per machine that holds one",
         env.part_config, config_.num_parts, env.ip_config, env.server_machines(),
         env.server_machines() == env.num_machines ? "" : " holding partitions");
  const MachineAddress& me = machines[env.machine_id];
  const bool main = env.server_id == 0;
  const bool host = main && env.machine_id == 0;
  const net::Security security = job_security(env);
  rendezvous_ = std::make_unique<Rendezvous>(env.master_addr, env.master_port, host, env.timeout_s, security);

  const std::string main_key = segment_prefix_key(env.machine_id);
  if (main) {
    store::remove_stale_segments();
    segment_prefix_ = store::segment_prefix(env.job_id, env.machine_id, ::getpid());
    locks_memory_ = store::SharedMemory::create(segment_prefix_ + "locks", store::RowLocks::kBytes);
    owned_segments_.names.push_back(locks_memory_.name());
  }
  const std::string endpoint = fmt::format("tcp://{}:{}", me.ip, me.server_port(env.server_id));
  socket_ = std::make_unique<net::ServerSocket>(endpoint, who_, security);
  partition_ = std::make_unique<store::PartitionStore>(config_, book_, env.machine_id);
  if (main) {
    rendezvous_->set(main_key, segment_prefix_);
    // The partition's own arrays (features, labels, masks) are read from its
    // files, not shared memory; their specs are published all the same, so
    // that trainers on client machines, which hold no partition, can open them.
    for (const std::string& name : partition_->names()) publish_tensor(*rendezvous_, env.machine_id, partition_->get(name));
  } else {
    segment_prefix_ = rendezvous_->get(main_key);
    locks_memory_ = store::SharedMemory::attach(segment_prefix_ + "locks");
  }
  locks_ = store::RowLocks(locks_memory_.data());
  rendezvous_->set(fmt::format("server/{}/{}", env.machine_id, env.server_id), endpoint);
  rendezvous_->add("servers_up", 1);
  fmt::print(stderr, "{}: serving partition {} ({} nodes, {} in-edges) at {}\n", who_, env.machine_id,
             partition_->num_nodes(), partition_->indices().rows(), endpoint);
}

PartitionServer::~PartitionServer() = default;

void PartitionServer::serve() {
  net::Request request;
  while (running_ && !g_stop) {
    if (!socket_->receive(&request, 200)) continue;
    try {
      handle(request);
    } catch (const std::exception& e) {
      // A bad request (unknown tensor, row out of range, malformed frames)
      // fails alone: the client gets the reason, the server keeps serving.
      socket_->reply_error(request, fmt::format("{}: {}", who_, describe(e)));
    }
  }
}

store::LocalTensor& PartitionServer::tensor(const std::string& name) {
  store::LocalTensor* t = resolve_tensor(*partition_, rendezvous_.get(), env_.machine_id, name);
  if (t == nullptr) fail("partition {} has no tensor named '{}'", env_.machine_id, name);
  return *t;
}

void PartitionServer::handle(net::Request& request) {
  const Header& h = request.header;
  Header reply;
  std::vector<zmq::message_t> frames;
  switch (static_cast<MessageType>(h.type)) {
    case MessageType::kPull: {
      store::LocalTensor& t = tensor(net::header_name(h));
      int64_t n = 0;
      const int64_t* rows = ids_frame(request, 0, &n);
      Array out = store::gather_rows(t, rows, n);
      net::set_shape(&reply, out.dtype(), out.shape());
      frames.push_back(net::frame_of(out));
      break;
    }
    case MessageType::kPush: {
      store::LocalTensor& t = tensor(net::header_name(h));
      int64_t n = 0;
      const int64_t* rows = ids_frame(request, 0, &n);
      if (request.frames.size() != 2) throw ProtocolError("push needs ids and values frames");
      net::check_frame(request.frames[1].size(), t.rows.dtype(), n, t.spec.row_elems(), "values");
      if (h.iarg == static_cast<int64_t>(store::PushMode::kAdd))
        store::add_rows(t, rows, n, request.frames[1].data(), locks_);
      else
        store::assign_rows(t, rows, n, request.frames[1].data());
      break;
    }
    case MessageType::kSparseStep: {
      const std::string name = net::header_name(h);
      store::LocalTensor& w = tensor(name);
      int64_t n = 0;
      const int64_t* rows = ids_frame(request, 0, &n);
      if (request.frames.size() != 2) throw ProtocolError("sparse step needs ids and gradient frames");
      net::check_frame(request.frames[1].size(), DType::kFloat32, n, w.spec.row_elems(), "gradients");
      store::SparseStepParams p;
      p.kind = static_cast<store::SparseOptimizer>(h.iarg);
      p.lr = h.fargs[0];
      p.eps = h.fargs[1];
      p.beta1 = h.fargs[2];
      p.beta2 = h.fargs[3];
      store::apply_sparse_step([this](const std::string& s) -> store::LocalTensor& { return tensor(s); }, name, p,
                               rows, n, request.frames[1].data<float>(), locks_);
      break;
    }
    case MessageType::kCreate: create(request); break;
    case MessageType::kDelete: remove(net::header_name(h)); break;
    case MessageType::kInDegrees: {
      int64_t n = 0;
      const int64_t* nodes = ids_frame(request, 0, &n);
      const int64_t* indptr = partition_->indptr().data<int64_t>();
      std::vector<int64_t> degrees(n);
      for (int64_t i = 0; i < n; ++i) {
        if (nodes[i] < 0 || nodes[i] >= partition_->num_nodes())
          fail("local node {} is out of range (partition {} owns {})", nodes[i], env_.machine_id,
               partition_->num_nodes());
        degrees[i] = indptr[nodes[i] + 1] - indptr[nodes[i]];
      }
      net::set_shape(&reply, DType::kInt64, {n});
      frames.push_back(net::frame_of(std::move(degrees)));
      break;
    }
    case MessageType::kTopInDegree: {
      const int64_t n = partition_->num_nodes();
      if (h.iarg < 0 || h.iarg > n)
        throw ProtocolError(fmt::format("asked for the {} nodes of largest in-degree of a partition of {}", h.iarg, n));
      const int64_t* indptr = partition_->indptr().data<int64_t>();
      std::vector<int64_t> nodes(n);
      for (int64_t i = 0; i < n; ++i) nodes[i] = i;
      // Largest first; ties by offset, so every trainer caches the same nodes.
      std::partial_sort(nodes.begin(), nodes.begin() + h.iarg, nodes.end(), [indptr](int64_t a, int64_t b) {
        const int64_t da = indptr[a + 1] - indptr[a], db = indptr[b + 1] - indptr[b];
        return da != db ? da > db : a < b;
      });
      nodes.resize(h.iarg);
      net::set_shape(&reply, DType::kInt64, {h.iarg});
      frames.push_back(net::frame_of(std::move(nodes)));
      break;
    }
    case MessageType::kFindEdges: {
      int64_t n = 0;
      const int64_t* eids = ids_frame(request, 0, &n);
      std::vector<int64_t> src(n), dst(n);
      const int64_t* indices = partition_->indices().data<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t pos = partition_->edge_position(eids[i]);
        src[i] = indices[pos];
        dst[i] = partition_->first_node() + partition_->node_of_position(pos);
      }
      net::set_shape(&reply, DType::kInt64, {n});
      frames.push_back(net::frame_of(std::move(src)));
      frames.push_back(net::frame_of(std::move(dst)));
      break;
    }
    case MessageType::kShutdown: running_ = false; break;
    default: {
      // Requests of the parts above the runtime (sampling) go to the
      // handler that part registered.
      const RequestHandler* service = find_service(static_cast<MessageType>(h.type));
      if (service == nullptr) throw ProtocolError(fmt::format("message type {} is not a request", h.type));
      ServedPartition served{env_, config_, book_, *partition_, [this](const std::string& name) -> store::LocalTensor& {
                               return tensor(name);
                             }};
      frames = (*service)(served, request, &reply);
    }
  }
  socket_->reply(request, reply, std::move(frames));
}

void PartitionServer::create(net::Request& request) {
  if (request.frames.size() != 1) throw ProtocolError("create needs one spec frame");
  const store::TensorSpec spec = store::TensorSpec::from_json(request.frames[0].to_string());
  if (spec.name.find('/') != std::string::npos)
    fail("tensor name '{}' may not contain '/' (reserved for the partition's own arrays)", spec.name);
  if (env_.server_id != 0) fail("tensors are created by the main server (server 0), not {}", who_);
  if (store::LocalTensor* existing = partition_->find(spec.name)) {
    if (existing->spec.dtype != spec.dtype || existing->spec.row_shape != spec.row_shape ||
        existing->spec.policy != spec.policy)
      fail("tensor '{}' exists with another type or shape ({} rows of {} {} by {})", spec.name,
           existing->num_rows(), existing->spec.row_elems(), dtype_name(existing->spec.dtype), existing->spec.policy);
    return;
  }
  const IdSpace& space = book_.space(spec.policy);
  const int part = env_.machine_id;
  const std::string segment = store::segment_name(segment_prefix_, spec.name);
  store::LocalTensor& t = partition_->add(
      store::create_shared_tensor(spec, space.starts[part], space.starts[part + 1] - space.starts[part], segment));
  owned_segments_.names.push_back(segment);
  publish_tensor(*rendezvous_, env_.machine_id, t);
}

void PartitionServer::remove(const std::string& name) {
  store::LocalTensor* t = partition_->find(name);
  if (t == nullptr || !t->shm) return;  // unknown here or a partition array: nothing to free
  if (env_.server_id == 0) {
    unpublish_tensor(*rendezvous_, env_.machine_id, name);
    t->shm->unlink();
    auto& names = owned_segments_.names;
    names.erase(std::remove(names.begin(), names.end(), t->shm->name()), names.end());
  }
  partition_->remove(name);
}

}  // namespace

int run_server(const JobEnv& env) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  try {
    PartitionServer server(env);
    server.serve();
    fmt::print(stderr, "server {}: shut down (peak RSS {:.0f} MB)\n", env.label(), peak_rss_bytes() / 1e6);
    return g_stop ? 143 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "server {}: error: {}\n", env.label(), describe(e));
    return 1;
  }
}

}  // namespace tessera::distributed
