// The servers' side of distributed neighbour sampling, registered with the
// partition servers' services, so that the server below sampling never
// calls into it.
#include "sampling/sample_service.h"

#include <fmt/format.h>

#include "job/tensor_registry.h"
#include "net/transport.h"
#include "server/server_state.h"
#include "tessera/base/error.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {
namespace {

// With replacement a seed draws its fanout, whatever its degree: what one
// request may make a server allocate is bounded (16.8M edges, ~400 MB of
// reply), far above a mini-batch's layer (10,000 seeds x 25 = 250k).
constexpr int64_t kMaxDrawsWithReplacement = int64_t{1} << 24;

void check_draws(const FanoutSpec& spec, int64_t seeds) {
  if (!spec.replace) return;  // at most each seed's in-edges
  int64_t per_seed = spec.etype_fanouts.empty() ? spec.fanout : 0;
  for (const int64_t f : spec.etype_fanouts)
    if (f > 0 && __builtin_add_overflow(per_seed, f, &per_seed)) per_seed = kMaxDrawsWithReplacement + 1;
  if (per_seed > 0 && seeds > kMaxDrawsWithReplacement / per_seed)
    throw net::ProtocolError(fmt::format("a sample request with replacement for {} seeds of fanout {} would draw "
                                         "more than {} edges: send fewer seeds per request",
                                         seeds, per_seed, kMaxDrawsWithReplacement));
}

net::Frames serve_sample(server::ServerState& state, net::Request& request, net::Header* reply) {
  int64_t n = 0;
  const int64_t* seeds = net::ids_frame(request, 0, &n);
  if (request.frames.size() != 2 && request.frames.size() != 3)
    throw net::ProtocolError("sample needs seeds and spec frames (and the weight names, if weighted)");
  if (request.frames[1].size() % sizeof(int64_t) != 0) throw net::ProtocolError("sample spec frame is not int64");
  FanoutSpec spec = decode_fanout(request.frames[1].data<int64_t>(), request.frames[1].size() / sizeof(int64_t));
  check_draws(spec, n);
  if (!net::header_name(request.header).empty())
    throw net::ProtocolError("a sample request names its weight tensors in a third frame, not in its header");
  std::vector<Array> weight_rows;  // held while this request samples
  if (request.frames.size() == 3) {
    const auto tensor_of = [&](const std::string& name) {
      return job::resolve_tensor(*state.partition, state.rendezvous.get(), state.env.machine_id, name);
    };
    weight_rows =
        use_edge_weights(tensor_of, state.config, state.book, state.env.machine_id,
                         decode_weight_names(request.frames[2].data<char>(), request.frames[2].size()), &spec);
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
