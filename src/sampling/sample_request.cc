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

void check_edge_weights(const std::vector<std::string>& names, const PartitionConfig& config,
                        const PartitionBook& book,
                        const std::function<store::TensorSpec(const std::string& name, int etype)>& spec_of) {
  if (names.size() != config.etypes.size())
    fail("edge weights: {} tensor names for a graph of {} edge types (one per type)", names.size(),
         config.etypes.size());
  bool any = false;
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].empty()) continue;  // sampled uniformly
    const int etype = static_cast<int>(k);
    const store::TensorSpec spec = spec_of(names[k], etype);
    if (spec.dtype != DType::kFloat32 || spec.row_elems() != 1 || spec.policy != book.edge_policy(etype))
      fail("edge weight tensor '{}' must hold one float32 per edge of type {}", names[k], config.etypes[k]);
    any = true;
  }
  if (!any) fail("edge weights: every edge type is sampled uniformly; name a weight tensor");
}

std::vector<Array> use_edge_weights(const std::function<store::LocalTensor*(const std::string&)>& tensor_of,
                                    const PartitionConfig& config, const PartitionBook& book, int part,
                                    const std::vector<std::string>& names, FanoutSpec* spec) {
  std::vector<const store::LocalTensor*> tensors(names.size(), nullptr);
  check_edge_weights(names, config, book, [&](const std::string& name, int etype) {
    tensors[etype] = tensor_of(name);
    if (tensors[etype] == nullptr)
      fail("edge weight tensor '{}' (edge type {}) is not on partition {}", name, config.etypes[etype], part);
    return tensors[etype]->spec;
  });
  spec->weights.clear();
  std::vector<Array> rows;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k] == nullptr) {  // sampled uniformly
      spec->weights.push_back({});
      continue;
    }
    const int64_t first = book.edge_space(static_cast<int>(k)).homogeneous_first[part];
    spec->weights.push_back({tensors[k]->rows.data<float>(), first});
    rows.push_back(tensors[k]->rows);
  }
  return rows;
}

std::string encode_weight_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (name.find('\0') != std::string::npos) fail("edge weight tensor name '{}' holds a zero byte", name);
    joined += name;
    joined += '\0';
  }
  return joined;
}

std::vector<std::string> decode_weight_names(const char* data, size_t size) {
  const std::string joined(data, size);
  if (!joined.empty() && joined.back() != '\0')
    throw net::ProtocolError("a sample request's weight names do not end in a zero byte");
  std::vector<std::string> names;
  for (size_t start = 0; start < joined.size();) {
    const size_t end = joined.find('\0', start);
    names.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

}  // namespace tessera::sampling
