// The servers' side of distributed neighbour sampling: a kSample request
// carries seeds of the server's partition and a fanout spec; the reply is
// the sampled in-edges. Registered with the server's request table, so the
// runtime below sampling never calls into it.
#include <fmt/format.h>

#include "distributed/services.h"
#include "net/transport.h"
#include "tessera/base/error.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {
namespace {

std::vector<zmq::message_t> serve_sample(distributed::ServedPartition& server, net::Request& request,
                                         net::Header* reply) {
  int64_t n = 0;
  const int64_t* seeds = distributed::ids_frame(request, 0, &n);
  if (request.frames.size() != 2) throw net::ProtocolError("sample needs seeds and spec frames");
  if (request.frames[1].size() % sizeof(int64_t) != 0) throw net::ProtocolError("sample spec frame is not int64");
  FanoutSpec spec = decode_fanout(request.frames[1].data<int64_t>(), request.frames[1].size() / sizeof(int64_t));
  const std::string weight = net::header_name(request.header);
  if (!weight.empty()) {
    if (server.config.etypes.size() != 1) fail("edge weight '{}' needs a graph with one edge type", weight);
    use_edge_weights(server.tensor(weight), server.book, server.env.machine_id, &spec);
  }
  SampledEdges edges;
  sample_in_edges(csc_view(server.partition), seeds, n, spec, &edges);
  net::set_shape(reply, DType::kInt64, {n});
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::move(edges.counts)));
  frames.push_back(net::frame_of(std::move(edges.src)));
  frames.push_back(net::frame_of(std::move(edges.eids)));
  if (!server.partition.etypes().empty_handle()) frames.push_back(net::frame_of(std::move(edges.etypes)));
  return frames;
}

[[maybe_unused]] const bool kRegistered = distributed::register_service(net::MessageType::kSample, serve_sample);

}  // namespace
}  // namespace tessera::sampling
