// Turns one layer's sampled edges into a Block: numbers the sources
// (destinations first, then new nodes in order of first appearance) and lays
// the edges out as CSR. Relabelling goes through a dense slot per graph node
// (4 bytes each, reset after every block) instead of a hash map: one
// uncontended array lookup per edge is what makes sampling fast. A builder
// is single-threaded; sampler threads keep one each.
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
