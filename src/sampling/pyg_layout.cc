#include "tessera/sampling/pyg_layout.h"

#include <utility>

namespace tessera::sampling {

PygSubgraph pyg_layout(const std::vector<Block>& blocks) {
  PygSubgraph out;
  if (blocks.empty()) return out;
  const std::vector<int64_t>& all = blocks.front().src_nodes;
  out.num_seeds = blocks.back().num_dst;
  std::vector<char> kept(all.size(), 0);
  for (int64_t p = 0; p < out.num_seeds; ++p) kept[p] = 1;
  std::vector<std::pair<int64_t, int64_t>> spans{{0, out.num_seeds}};
  std::vector<int64_t> reached;
  int64_t lo = 0, hi = out.num_seeds;  // this hop's frontier: the kept positions in [lo, hi)
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    const size_t before = out.src.size();
    reached.clear();
    for (int64_t d = lo; d < hi && d < b->num_dst; ++d) {
      if (!kept[d]) continue;
      for (int64_t e = b->indptr[d]; e < b->indptr[d + 1]; ++e) {
        out.src.push_back(b->indices[e]);
        out.dst.push_back(d);
        out.eids.push_back(b->eids[e]);
        if (!b->etypes.empty()) out.etypes.push_back(b->etypes[e]);
        reached.push_back(b->indices[e]);
      }
    }
    // Marked after the hop: a node this hop reaches joins the next frontier, not this one.
    for (const int64_t s : reached) kept[s] = 1;
    out.edges_per_hop.push_back(static_cast<int64_t>(out.src.size() - before));
    lo = hi;
    hi = b->num_src();
    spans.emplace_back(lo, hi);
  }
  std::vector<int64_t> position(all.size(), -1);
  for (size_t p = 0; p < all.size(); ++p)
    if (kept[p]) {
      position[p] = static_cast<int64_t>(out.nodes.size());
      out.nodes.push_back(all[p]);
    }
  for (int64_t& s : out.src) s = position[s];
  for (int64_t& d : out.dst) d = position[d];
  for (const auto& [a, z] : spans) {
    int64_t count = 0;
    for (int64_t p = a; p < z; ++p) count += kept[p];
    out.nodes_per_hop.push_back(count);
  }
  return out;
}

}  // namespace tessera::sampling
