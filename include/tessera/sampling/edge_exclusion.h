// The edges a sample leaves out (DGL's `exclude`): when a mini-batch predicts
// edges, those edges (and their reverses) must not reach its own blocks, or
// the model learns to read the answer from its input. As in DGL, excluded
// edges are removed from what was sampled, so a node may keep fewer than its
// fanout.
//
// An EdgeExclusion is a plain value: build it, then seal() it before use;
// excludes() only reads, so threads may share a sealed one. Header-only
// contract, implementation in edge_exclusion.cc; nothing here throws.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/sampling/neighbor_sampler.h"

namespace tessera::sampling {

struct EdgeExclusion {
  // Excluded edge IDs (homogeneous).
  std::vector<int64_t> eids;
  // Excluded (source, destination, edge type) ends: every edge that joins
  // them with that type, whatever its ID (DGL's reverse_types).
  std::vector<std::array<int64_t, 3>> ends;

  bool empty() const { return eids.empty() && ends.empty(); }
  // Sorts and deduplicates both lists and builds the filter; call once after filling them.
  void seal();
  bool excludes(int64_t src, int64_t dst, int64_t etype, int64_t eid) const;

 private:
  // A one-hash bitmap of every excluded ID and end: almost every sampled edge
  // is not excluded, and one bit tells so before any search (bench/link.sh).
  static constexpr uint64_t kFilterBits = 1 << 16;
  std::vector<uint64_t> filter_;
  static uint64_t bit_of_eid(int64_t eid);
  static uint64_t bit_of_ends(int64_t src, int64_t dst, int64_t etype);
  bool maybe(uint64_t bit) const { return (filter_[bit >> 6] >> (bit & 63)) & 1; }
};

// Removes the excluded edges from `edges`, the sample of `seeds` (their
// destinations, in order).
void remove_excluded(const int64_t* seeds, const EdgeExclusion& exclusion, SampledEdges* edges);

}  // namespace tessera::sampling
