// Distributed neighbour sampling's request: a partition server samples the
// in-edges of seeds of its partition. The handler is in sample_service.cc,
// the client side in dist_sampler.cc.
//
// Internal header.
#pragma once

#include "net/message.h"

namespace tessera::sampling {

// Header name: the edge-weight tensor, or empty. Frames: seeds (local
// offsets, int64), the fanout spec (int64) -> reply: counts per seed,
// sources, edge IDs, and edge types where the graph has several.
constexpr net::RequestType kSample = 10;

}  // namespace tessera::sampling
