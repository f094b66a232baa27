#include "tessera/sampling/edge_exclusion.h"

#include <algorithm>

#include "tessera/base/random.h"

namespace tessera::sampling {

uint64_t EdgeExclusion::bit_of_eid(int64_t eid) { return splitmix64(static_cast<uint64_t>(eid)) % kFilterBits; }

uint64_t EdgeExclusion::bit_of_ends(int64_t src, int64_t dst, int64_t etype) {
  const uint64_t h = splitmix64(static_cast<uint64_t>(src) ^ splitmix64(static_cast<uint64_t>(dst) + 0x9e37U * etype));
  return h % kFilterBits;
}

void EdgeExclusion::seal() {
  std::sort(eids.begin(), eids.end());
  eids.erase(std::unique(eids.begin(), eids.end()), eids.end());
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  filter_.assign(kFilterBits / 64, 0);
  auto set = [this](uint64_t bit) { filter_[bit >> 6] |= uint64_t{1} << (bit & 63); };
  for (const int64_t e : eids) set(bit_of_eid(e));
  for (const auto& [s, d, t] : ends) set(bit_of_ends(s, d, t));
}

bool EdgeExclusion::excludes(int64_t src, int64_t dst, int64_t etype, int64_t eid) const {
  if (!eids.empty() && maybe(bit_of_eid(eid)) && std::binary_search(eids.begin(), eids.end(), eid)) return true;
  return !ends.empty() && maybe(bit_of_ends(src, dst, etype)) &&
         std::binary_search(ends.begin(), ends.end(), std::array<int64_t, 3>{src, dst, etype});
}

void remove_excluded(const int64_t* seeds, const EdgeExclusion& exclusion, SampledEdges* edges) {
  if (exclusion.empty()) return;
  const bool typed = !edges->etypes.empty();
  size_t read = 0, write = 0;
  for (size_t i = 0; i < edges->counts.size(); ++i) {
    int64_t kept = 0;
    for (int64_t k = 0; k < edges->counts[i]; ++k, ++read) {
      const int64_t etype = typed ? edges->etypes[read] : 0;
      if (exclusion.excludes(edges->src[read], seeds[i], etype, edges->eids[read])) continue;
      edges->src[write] = edges->src[read];
      edges->eids[write] = edges->eids[read];
      if (typed) edges->etypes[write] = edges->etypes[read];
      ++write;
      ++kept;
    }
    edges->counts[i] = kept;
  }
  edges->src.resize(write);
  edges->eids.resize(write);
  if (typed) edges->etypes.resize(write);
}

}  // namespace tessera::sampling
