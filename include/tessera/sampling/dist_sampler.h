// Distributed neighbour sampling. For each layer, from the output layer down, the seeds are grouped by owning
// partition: remote groups go out as one request per partition (sampled by its servers), the local group is
// sampled straight from this machine's shared partition meanwhile, and the answers are merged back in seed
// order and relabelled into a Block.
//
// A DistNeighborSampler keeps a pointer to the Context, which must outlive it, and views of the local
// partition's arrays; it is not changed after construction. Its const methods may run on several threads at
// once, each with its own Channel (its own net::Client, since ZeroMQ sockets are not shared) and its own
// BlockBuilder; blocks returned belong to the caller. No call is collective. Errors are tessera::Error: a bad
// fanout (naming the flag), an unknown or ill-shaped edge weight tensor, a seed that is not a node, or a
// malformed or missing server reply.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/sampling/block.h"
#include "tessera/sampling/block_builder.h"
#include "tessera/sampling/edge_exclusion.h"
#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {

struct SamplerOptions {
  std::vector<int64_t> fanouts;  // per layer, input layer first (DGL's order); -1: all in-edges
  bool replace = false;
  // The edge weights to sample in proportion to: per edge type, the full
  // name of a tensor of one float32 per edge of that type (partition data,
  // store::edge_tensor_name(etype, feature), or a DistTensor made at run
  // time). Empty: uniform.
  std::vector<std::string> weights;
  // Each layer's fanout per edge type (DGL's sample_etype_neighbors,
  // --fanout-mode per-etype) instead of across all in-edges (total).
  bool per_etype = false;
};

// What a kSample request carries besides its seeds.
std::vector<int64_t> encode_fanout(const FanoutSpec& spec);
FanoutSpec decode_fanout(const int64_t* values, size_t count);

// Points `spec` at partition `part`'s edge weights: the tensors `names`, one
// per edge type ("" for a type sampled uniformly), found by `tensor_of` (a
// full tensor name -> the local tensor, or null). The trainer's sampler and
// the servers both check them this way. Returns the weights' arrays, which
// keep the memory `spec` points into mapped while held (a DistTensor may be
// deleted while a sampler still uses it). Errors name the tensor that is
// missing or of the wrong shape.
std::vector<Array> use_edge_weights(const std::function<store::LocalTensor*(const std::string&)>& tensor_of,
                                    const PartitionConfig& config, const PartitionBook& book, int part,
                                    const std::vector<std::string>& names, FanoutSpec* spec);

// Checks weight tensor names, one per edge type ("" for uniform), whose specs
// `spec_of` gives (throwing when a tensor is missing): each must hold one
// float32 per edge of its type. An Error naming the tensor otherwise.
// use_edge_weights checks this way; a machine without a partition calls it
// with the tensors' published specs.
void check_edge_weights(const std::vector<std::string>& names, const PartitionConfig& config,
                        const PartitionBook& book,
                        const std::function<store::TensorSpec(const std::string& name, int etype)>& spec_of);

// A sample request's weight tensor names, as the bytes of one frame (each
// name followed by a zero byte), and back; decoding malformed bytes throws.
std::string encode_weight_names(const std::vector<std::string>& names);
std::vector<std::string> decode_weight_names(const char* data, size_t size);

// One thread's way to the servers: its own sockets (ZeroMQ sockets are not
// shared between threads) and its turn in the rotation over a machine's
// servers. Null client in standalone mode.
struct Channel {
  net::Client* client = nullptr;
  int rotation = 0;
};

class DistNeighborSampler {
 public:
  DistNeighborSampler(distributed::Context& ctx, SamplerOptions options);

  const SamplerOptions& options() const { return options_; }
  // The same sampler with other fanouts (e.g. evaluation's).
  DistNeighborSampler with_fanouts(std::vector<int64_t> fanouts) const;
  int num_layers() const { return static_cast<int>(options_.fanouts.size()); }

  // Blocks for `seeds` (unique homogeneous node IDs), input layer first.
  // `key` fixes every random choice: the same key and seeds give the same
  // blocks whichever thread samples them and however seeds are grouped.
  // `exclude` (sealed), if given, is left out of every layer.
  std::vector<Block> sample_blocks(const std::vector<int64_t>& seeds, uint64_t key, BlockBuilder& builder,
                                   const Channel& channel, const EdgeExclusion* exclude = nullptr) const;

  // One layer's sample of `seeds` (any partitions), in seed order.
  void sample_layer(const std::vector<int64_t>& seeds, FanoutSpec spec, const Channel& channel,
                    SampledEdges* out) const;

 private:
  distributed::Context* ctx_;
  SamplerOptions options_;
  CscView local_;
  FanoutSpec local_weights_;   // weights and offset of the local partition's edges, if any
  std::vector<Array> local_weight_rows_;  // what local_weights_ points into, kept mapped
};

}  // namespace tessera::sampling
