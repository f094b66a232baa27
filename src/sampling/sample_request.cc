// What a sample request carries beyond its seeds, shared by the two ends:
// the sampler (dist_sampler.cc) encodes a layer's FanoutSpec, the servers'
// sample service decodes it and points it at their edge weights. Kept apart
// from the sampler so that a server links none of the trainer's side.
#include <cstring>

#include <fmt/format.h>

#include "net/message.h"
#include "tessera/base/error.h"
#include "tessera/sampling/dist_sampler.h"

namespace tessera::sampling {

std::vector<int64_t> encode_fanout(const FanoutSpec& spec) {
  int64_t key;
  std::memcpy(&key, &spec.key, sizeof key);
  std::vector<int64_t> values{spec.fanout, spec.replace ? 1 : 0, key,
                              static_cast<int64_t>(spec.etype_fanouts.size())};
  values.insert(values.end(), spec.etype_fanouts.begin(), spec.etype_fanouts.end());
  return values;
}

FanoutSpec decode_fanout(const int64_t* values, size_t count) {
  if (count < 4 || values[3] < 0 || count != 4 + static_cast<size_t>(values[3]))
    throw net::ProtocolError(fmt::format("a sample request's spec has {} values, expected 4 + its edge-type count",
                                         count));
  FanoutSpec spec;
  spec.fanout = values[0];
  spec.replace = values[1] != 0;
  std::memcpy(&spec.key, &values[2], sizeof spec.key);
  spec.etype_fanouts.assign(values + 4, values + count);
  if (spec.fanout < -1) throw net::ProtocolError(fmt::format("fanout {} is below -1", spec.fanout));
  for (const int64_t f : spec.etype_fanouts)
    if (f < -1) throw net::ProtocolError(fmt::format("edge-type fanout {} is below -1", f));
  return spec;
}

void use_edge_weights(const store::LocalTensor& weights, const PartitionBook& book, int part, FanoutSpec* spec) {
  if (weights.spec.dtype != DType::kFloat32 || weights.spec.row_elems() != 1 || weights.spec.policy != book.edge_policy(0))
    fail("edge weight tensor '{}' must hold one float32 per edge of the graph's only edge type", weights.spec.name);
  spec->weights = weights.rows.data<float>();
  spec->weight_offset = book.edge_space(0).homogeneous_first[part];
}

}  // namespace tessera::sampling
