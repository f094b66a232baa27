// A service that only this test knows, registered from this file the way a
// part of the library registers its own: the partition servers (this binary
// under TESSERA_ROLE=server) answer it, and every trainer calls it on every
// machine and checks the answers against the partition book.
#include <fmt/format.h>

#include "net/transport.h"
#include "scenarios.h"
#include "server/server_state.h"
#include "tessera/distributed/context.h"

namespace {

// Far from the library's types; a clash would fail every server's start.
constexpr tessera::net::RequestType kPartitionSummary = 40001;

// Frames: int64 values -> reply: [machine, nodes of the partition, sum of the values].
tessera::net::Frames serve_summary(tessera::server::ServerState& state, tessera::net::Request& request,
                                      tessera::net::Header* reply) {
  int64_t n = 0;
  const int64_t* values = tessera::net::ids_frame(request, 0, &n);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += values[i];
  tessera::net::set_shape(reply, tessera::DType::kInt64, {3});
  tessera::net::Frames frames;
  frames.push_back(tessera::net::frame_of(std::vector<int64_t>{state.env.machine_id, state.partition->num_nodes(), sum}));
  return frames;
}

[[maybe_unused]] const bool kSummaryService =
    tessera::server::partition_services().add(kPartitionSummary, "test: partition summary", serve_summary);

}  // namespace

int run_service(const std::map<std::string, std::string>&) {
  auto ctx = tessera::distributed::initialize();
  const tessera::IdSpace& nodes = ctx->book().space(ctx->book().node_policy(0));
  std::vector<uint64_t> requests;
  for (int m = 0; m < ctx->num_parts(); ++m) {
    tessera::net::Header h = tessera::net::make_header(kPartitionSummary, 0, "");
    tessera::net::set_shape(&h, tessera::DType::kInt64, {3});
    std::vector<zmq::message_t> frames;
    frames.push_back(tessera::net::frame_of(std::vector<int64_t>{m, 10 * ctx->rank(), 100}));
    requests.push_back(ctx->client().send(m * ctx->env().num_servers, h, std::move(frames)));
  }
  const std::vector<tessera::net::Reply> replies = ctx->client().wait(requests);
  for (int m = 0; m < ctx->num_parts(); ++m) {
    const int64_t* got = replies[m].frames.at(0).data<int64_t>();
    const int64_t want_nodes = nodes.starts[m + 1] - nodes.starts[m];
    if (got[0] != m || got[1] != want_nodes || got[2] != m + 10 * ctx->rank() + 100)
      tessera::fail("machine {} answered [{}, {}, {}], expected [{}, {}, {}]", m, got[0], got[1], got[2], m, want_nodes,
                    m + 10 * ctx->rank() + 100);
    fmt::print("rank {}: registered service answered by machine {}\n", ctx->rank(), m);
  }
  ctx->finalize();
  return 0;
}
