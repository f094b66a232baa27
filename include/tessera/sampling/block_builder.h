// Turns one layer's sampled edges into a Block: numbers the sources (destinations first, then new nodes in
// order of first appearance) and lays the edges out as CSR. Relabelling goes through a dense slot per graph
// node (4 bytes each, reset after every block) instead of a hash map: one uncontended array lookup per edge is
// what makes sampling fast.
//
// A builder owns its slot array and is single-threaded; sampler threads keep one each.
// build() takes the sampled edge IDs and types out of `edges` and returns a Block the caller owns. Errors are
// tessera::Error: a destination out of range or repeated, a block too large for 32-bit positions, or counts
// that do not match. A build() that threw leaves slots set, so drop that builder rather than reuse it.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/sampling/block.h"
#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {

class BlockBuilder {
 public:
  explicit BlockBuilder(int64_t num_nodes);

  // `dst`: the layer's destinations (unique); `edges`: their samples, in the
  // same order (its edge IDs move into the block).
  Block build(const std::vector<int64_t>& dst, SampledEdges&& edges);

 private:
  std::vector<int32_t> slot_;  // node ID -> position in the block's sources, or -1
};

}  // namespace tessera::sampling
