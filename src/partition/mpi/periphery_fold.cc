#include "partition/mpi/periphery_fold.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "tessera/base/error.h"

namespace tessera {
namespace {

struct Fold {
  int64_t into, leaf, weight;  // global IDs; the leaf's weight
};

}  // namespace

int64_t fill_level(std::vector<int64_t> loads, int64_t weight) {
  std::sort(loads.begin(), loads.end());
  int64_t level = loads.empty() ? 0 : loads[0];
  for (size_t filled = 1; filled <= loads.size(); ++filled) {
    // The `filled` lightest parts are at `level`; raise them together to the next part's load, or as far as the
    // weight goes (rounded up, so that the stretches cover all of it).
    const int64_t width = static_cast<int64_t>(filled);
    const int64_t next = filled < loads.size() ? loads[filled] : std::numeric_limits<int64_t>::max();
    if (next == std::numeric_limits<int64_t>::max() || (next - level) * width >= weight)
      return level + (weight + width - 1) / width;
    weight -= (next - level) * width;
    level = next;
  }
  return level;
}

PeripheryFold::PeripheryFold(const MpiWorld& world, const LocalGraph& g, int64_t first,
                             std::function<int(int64_t)> owner)
    : world_(world), first_(first), owner_(std::move(owner)) {
  const int64_t count = static_cast<int64_t>(g.xadj.size()) - 1;
  const int ranks = world.size();
  auto degree = [&](int64_t local) { return g.xadj[local + 1] - g.xadj[local]; };
  follows_.assign(count, kKept);
  weight_ = g.weights;

  // Each leaf learns its neighbour's degree: two leaves joined only to each
  // other are one isolated unit, headed by the lower ID.
  std::vector<int64_t> leaves, neighbour_degree;
  for (int64_t i = 0; i < count; ++i) {
    if (degree(i) == 0) follows_[i] = kIsolated;
    if (degree(i) == 1) {
      leaves.push_back(i);
      neighbour_degree.push_back(g.adjncy[g.xadj[i]]);
    }
  }
  lookup_in_place(world, &neighbour_degree, owner_, [&](int64_t v) { return degree(v - first_); });

  // Every other leaf is folded into its neighbour, which takes its weight and drops it from its list.
  std::vector<std::pair<int64_t, int64_t>> dropped;  // (local node, global neighbour)
  const int64_t batch = int64_t{1} << 22;
  const int64_t leaf_count = static_cast<int64_t>(leaves.size());
  const int64_t rounds = world.rounds_for(leaf_count, batch);
  for (int64_t round = 0; round < rounds; ++round) {
    std::vector<std::vector<Fold>> out(ranks);
    for (int64_t j = round * batch; j < std::min(leaf_count, (round + 1) * batch); ++j) {
      const int64_t local = leaves[j], v = first_ + local, u = g.adjncy[g.xadj[local]];
      if (neighbour_degree[j] == 1 && u > v) {
        follows_[local] = kIsolated;  // the head of a pair: the other leaf folds into it
        continue;
      }
      follows_[local] = u;
      out[owner_(u)].push_back({u, v, weight_[local]});
    }
    for (const Fold& f : world.exchange(out)) {
      weight_[f.into - first_] += f.weight;
      dropped.emplace_back(f.into - first_, f.leaf);
    }
  }
  std::sort(dropped.begin(), dropped.end());

  // The kept nodes' lists without their folded leaves; a node left with none
  // is placed like an isolated one, its leaves following it.
  std::vector<int64_t> reduced_id(count, -1);
  int64_t kept = 0;
  reduced_.xadj.push_back(0);
  auto drop = dropped.begin();
  for (int64_t i = 0; i < count; ++i) {
    if (follows_[i] != kKept) continue;
    const size_t start = reduced_.adjncy.size();
    for (int64_t a = g.xadj[i]; a < g.xadj[i + 1]; ++a) {
      // Both sorted: the adjacency by neighbour, the drops by (node, neighbour).
      while (drop != dropped.end() && (drop->first < i || (drop->first == i && drop->second < g.adjncy[a]))) ++drop;
      if (drop != dropped.end() && drop->first == i && drop->second == g.adjncy[a]) continue;
      reduced_.adjncy.push_back(g.adjncy[a]);
      if (!g.edge_weights.empty()) reduced_.edge_weights.push_back(g.edge_weights[a]);
    }
    if (reduced_.adjncy.size() == start) {
      follows_[i] = kIsolated;
      continue;
    }
    reduced_id[i] = kept++;
    reduced_.xadj.push_back(static_cast<int64_t>(reduced_.adjncy.size()));
    reduced_.weights.push_back(weight_[i]);
  }
  dropped = {};

  // Renumbered contiguously by rank: this rank's kept nodes follow those of lower ranks.
  reduced_start_.assign(1, 0);
  for (int64_t k : world.gather_all(kept)) reduced_start_.push_back(reduced_start_.back() + k);
  for (int64_t& id : reduced_id)
    if (id >= 0) id += reduced_first();
  folded_global_ = world.sum(count) - reduced_nodes();
  int64_t total = 0, kept_weight = 0;
  for (int64_t w : g.weights) total += w;
  for (int64_t w : reduced_.weights) kept_weight += w;
  total_weight_ = world.sum(total);
  placed_after_weight_ = total_weight_ - world.sum(kept_weight);
  lookup_in_place(world, &reduced_.adjncy, owner_, [&](int64_t v) {
    const int64_t id = reduced_id[v - first_];
    if (id < 0) fail("internal error: node {} was folded away but is still a neighbour", v);
    return id;
  });
}

int64_t PeripheryFold::reduced_first() const { return reduced_start_[world_.rank()]; }

std::vector<int32_t> PeripheryFold::expand(const std::vector<int32_t>& reduced_parts, int parts) {
  const int64_t count = static_cast<int64_t>(follows_.size());
  reduced_ = {};
  std::vector<int32_t> part(count, -1);
  std::vector<int64_t> load(parts, 0);
  int64_t isolated_weight = 0;
  for (int64_t i = 0, k = 0; i < count; ++i) {
    if (follows_[i] == kKept) {
      part[i] = reduced_parts[k++];
      load[part[i]] += weight_[i];
    } else if (follows_[i] == kIsolated) {
      isolated_weight += weight_[i];
    }
  }
  world_.sum_in_place(&load);

  // Isolated units fill the lightest parts up to one level, the level at
  // which they are used up: unit by unit along one line shared by all ranks,
  // on which part p owns a stretch as long as its shortfall below the level.
  // A part PT-Scotch left above the others' share gets none, and the rest
  // share the shortfall evenly rather than in part order.
  const std::vector<int64_t> isolated_by_rank = world_.gather_all(isolated_weight);
  int64_t position = 0, isolated_total = 0;
  for (int r = 0; r < world_.size(); ++r) {
    if (r < world_.rank()) position += isolated_by_rank[r];
    isolated_total += isolated_by_rank[r];
  }
  const int64_t level = fill_level(load, isolated_total);
  std::vector<int64_t> stretch_end(parts);
  int64_t end = 0;
  for (int p = 0; p < parts; ++p) stretch_end[p] = end += std::max<int64_t>(0, level - load[p]);
  for (int64_t i = 0; i < count; ++i) {
    if (follows_[i] != kIsolated) continue;
    const auto it = std::upper_bound(stretch_end.begin(), stretch_end.end(), position);
    part[i] = it == stretch_end.end() ? parts - 1 : static_cast<int32_t>(it - stretch_end.begin());
    position += weight_[i];
  }

  // Leaves follow the node they were folded into, kept or isolated.
  std::vector<int64_t> leaf_parts;
  for (int64_t i = 0; i < count; ++i)
    if (follows_[i] >= 0) leaf_parts.push_back(follows_[i]);
  lookup_in_place(world_, &leaf_parts, owner_, [&](int64_t v) { return static_cast<int64_t>(part[v - first_]); });
  for (int64_t i = 0, j = 0; i < count; ++i)
    if (follows_[i] >= 0) part[i] = static_cast<int32_t>(leaf_parts[j++]);
  return part;
}

}  // namespace tessera
