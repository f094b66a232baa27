// The servers' side of distributed neighbour sampling, registered with the
// partition servers' services, so that the server below sampling never
// calls into it.
#include "sampling/sample_service.h"

#include <fmt/format.h>

#include "net/transport.h"
#include "server/server_state.h"
#include "tessera/base/error.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {
namespace {

server::Frames serve_sample(server::ServerState& state, net::Request& request, net::Header* reply) {
  int64_t n = 0;
  const int64_t* seeds = server::ids_frame(request, 0, &n);
  if (request.frames.size() != 2) throw net::ProtocolError("sample needs seeds and spec frames");
  if (request.frames[1].size() % sizeof(int64_t) != 0) throw net::ProtocolError("sample spec frame is not int64");
  FanoutSpec spec = decode_fanout(request.frames[1].data<int64_t>(), request.frames[1].size() / sizeof(int64_t));
  const std::string weight = net::header_name(request.header);
  if (!weight.empty()) {
    if (state.config.etypes.size() != 1) fail("edge weight '{}' needs a graph with one edge type", weight);
    use_edge_weights(state.tensor(weight), state.book, state.env.machine_id, &spec);
  }
  SampledEdges edges;
  sample_in_edges(csc_view(*state.partition), seeds, n, spec, &edges);
  net::set_shape(reply, DType::kInt64, {n});
  std::vector<zmq::message_t> frames;
  frames.push_back(net::frame_of(std::move(edges.counts)));
  frames.push_back(net::frame_of(std::move(edges.src)));
  frames.push_back(net::frame_of(std::move(edges.eids)));
  if (!state.partition->etypes().empty_handle()) frames.push_back(net::frame_of(std::move(edges.etypes)));
  return frames;
}

[[maybe_unused]] const bool kSampleService = server::partition_services().add(kSample, "sampling: sample", serve_sample);

}  // namespace
}  // namespace tessera::sampling
