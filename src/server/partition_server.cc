#include "server/partition_server.h"

#include <unistd.h>

#include <csignal>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "job/job_security.h"
#include "job/rendezvous.h"
#include "net/transport.h"
#include "server/server_state.h"
#include "job/tensor_registry.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "tessera/job/ip_config.h"

namespace tessera::server {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

net::Frames serve_shutdown(ServerState& state, net::Request&, net::Header*) {
  state.running = false;
  return {};
}

[[maybe_unused]] const bool kShutdownService =
    partition_services().add(kShutdown, "partition server: shutdown", serve_shutdown);

// Joins the job: checks the partition against the ip_config, meets the
// others at the rendezvous store (hosting it on machine 0's main server),
// creates or maps the machine's shared row locks, binds the server's
// socket and maps the partition. Returns the bound socket.
std::unique_ptr<net::ServerSocket> open_partition(ServerState& state) {
  const job::JobEnv& env = state.env;
  const std::vector<job::MachineAddress> machines = job::read_ip_config(env.ip_config, env.num_servers);
  if (static_cast<int>(machines.size()) != env.num_machines)
    fail("{} lists {} machines but the launcher started {}", env.ip_config, machines.size(), env.num_machines);
  if (state.config.num_parts != env.server_machines())
    fail("{} has {} partitions but {} lists {} machines{}: partition the graph into one part per machine that holds one",
         env.part_config, state.config.num_parts, env.ip_config, env.server_machines(),
         env.server_machines() == env.num_machines ? "" : " holding partitions");
  const job::MachineAddress& me = machines[env.machine_id];
  const bool host = state.main() && env.machine_id == 0;
  const net::Security security = job::job_security(env);
  state.rendezvous =
      std::make_unique<job::Rendezvous>(env.master_addr, env.master_port, host, env.timeout_s, security);

  const std::string main_key = job::segment_prefix_key(env.machine_id);
  if (state.main()) {
    store::remove_stale_segments();
    state.segment_prefix = store::segment_prefix(env.job_id, env.machine_id, ::getpid());
    state.locks_memory = store::SharedMemory::create(state.segment_prefix + "locks", store::RowLocks::kBytes);
    state.owned_segments.names.push_back(state.locks_memory.name());
  }
  const std::string endpoint = fmt::format("tcp://{}:{}", me.ip, me.server_port(env.server_id));
  auto socket = std::make_unique<net::ServerSocket>(endpoint, state.who, security, env.timeout_s);
  state.partition = std::make_unique<store::PartitionStore>(state.config, state.book, env.machine_id);
  if (state.main()) {
    state.rendezvous->set(main_key, state.segment_prefix);
    // The partition's own arrays (features, labels, masks) are read from its
    // files, not shared memory; their specs are published all the same, so
    // that trainers on client machines, which hold no partition, can open them.
    for (const std::string& name : state.partition->names())
      job::publish_tensor(*state.rendezvous, env.machine_id, state.partition->get(name));
  } else {
    state.segment_prefix = state.rendezvous->get(main_key);
    state.locks_memory = store::SharedMemory::attach(state.segment_prefix + "locks");
  }
  state.locks = store::RowLocks(state.locks_memory.data());
  state.rendezvous->set(fmt::format("server/{}/{}", env.machine_id, env.server_id), endpoint);
  state.rendezvous->add("servers_up", 1);
  fmt::print(stderr, "{}: serving partition {} ({} nodes, {} in-edges) at {}\n", state.who, env.machine_id,
             state.partition->num_nodes(), state.partition->indices().rows(), endpoint);
  return socket;
}

// Serves requests until a trainer sends shutdown or a signal comes.
void serve(ServerState& state, net::ServerSocket& socket) {
  net::Request request;
  while (state.running && !g_stop) {
    // Its trainers gone without the shutdown (the last one sends it): they
    // died, or their hosts stopped or were cut off; the job is over, and on
    // a host cut off from the launcher nobody else would end this server.
    if (socket.seconds_alone() > state.env.timeout_s)
      fail_peer("every client has been gone for over {} s (--timeout) without the shutdown: their processes died, "
                "or their hosts stopped or became unreachable",
                state.env.timeout_s);
    if (!socket.receive(&request, 200)) continue;
    try {
      net::Header reply;
      net::Frames frames = partition_services().dispatch(state, request, &reply);
      socket.reply(request, reply, std::move(frames));
    } catch (const std::exception& e) {
      // A bad request (unknown tensor, row out of range, malformed frames)
      // fails alone: the client gets the reason, the server keeps serving.
      socket.reply_error(request, fmt::format("{}: {}", state.who, describe(e)));
    }
  }
}

}  // namespace

int run_server(const job::JobEnv& env) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  try {
    net::request_types().check();
    ServerState state(env);
    const std::unique_ptr<net::ServerSocket> socket = open_partition(state);
    serve(state, *socket);
    fmt::print(stderr, "server {}: shut down (peak RSS {:.0f} MB)\n", env.label(), peak_rss_bytes() / 1e6);
    return g_stop ? 143 : 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "server {}: error: {}\n", env.label(), describe(e));
    return 1;
  }
}

}  // namespace tessera::server
