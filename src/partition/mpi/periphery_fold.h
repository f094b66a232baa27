// Before PT-Scotch sees a graph, the nodes whose place no partitioner can improve leave it: a node with no
// neighbour costs no cut wherever it goes, and a node with one neighbour costs none beside that neighbour.
//
// Why: in power-law graphs they are many (RMAT 1M nodes / 20M edges: 36% of the nodes have no neighbour and 13%
// have one), and no edge can match them, so PT-Scotch's multilevel coarsening stalls (each level must shrink the
// graph by 20%) and hands a barely coarsened graph to sequential Scotch on every rank at once: the whole graph per
// rank, the opposite of what distributing it is for. Folded away, they cost nothing in cut:
//   - a leaf (one neighbour) is folded into its neighbour, whose weight grows by the leaf's, and follows it;
//   - an isolated node, and a pair of leaves joined only to each other, is placed after PT-Scotch, filling the
//     parts that PT-Scotch left lightest, so the balance holds on the whole weight.
// The rest keep their ranks and are renumbered contiguously, as PT-Scotch's block distribution wants.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "partition/mpi/mpi_world.h"
#include "partition/mpi/scotch_partition.h"

namespace tessera {

// The level to which `weight` raises the lightest of parts with these loads, filled from the lightest up: the
// smallest L with sum over parts of max(0, L - load) >= weight.
int64_t fill_level(std::vector<int64_t> loads, int64_t weight);

class PeripheryFold {
 public:
  // Collective. `graph` holds this rank's nodes [first, first + count) in global IDs; owner(v) is the rank
  // holding node v.
  PeripheryFold(const MpiWorld& world, const LocalGraph& graph, int64_t first, std::function<int(int64_t)> owner);

  // The graph of the nodes that stay, renumbered contiguously by rank, with the leaves' weight in their
  // neighbours'. Valid until expand().
  LocalGraph& reduced() { return reduced_; }
  int64_t folded_nodes() const { return folded_global_; }
  int64_t reduced_nodes() const { return reduced_start_.back(); }
  // The whole graph's vertex weight, and the part of it placed after partitioning (isolated units and what
  // follows them), which lets the parts PT-Scotch sees be unequal: the placement evens them out.
  int64_t total_weight() const { return total_weight_; }
  int64_t placed_after_weight() const { return placed_after_weight_; }
  // This rank's first node in the reduced numbering.
  int64_t reduced_first() const;

  // Collective. The part of each of this rank's original nodes, from the part of each reduced node here.
  std::vector<int32_t> expand(const std::vector<int32_t>& reduced_parts, int parts);

 private:
  static constexpr int64_t kKept = -1;      // in the reduced graph
  static constexpr int64_t kIsolated = -2;  // placed by weight after partitioning

  const MpiWorld& world_;
  int64_t first_ = 0;
  std::function<int(int64_t)> owner_;
  std::vector<int64_t> follows_;  // per local node: kKept, kIsolated, or the global ID of the node it follows
  std::vector<int64_t> weight_;   // per local node: its own weight plus that of the leaves it carries
  LocalGraph reduced_;
  std::vector<int64_t> reduced_start_;  // [ranks + 1]: rank r holds reduced nodes [start[r], start[r + 1])
  int64_t folded_global_ = 0;
  int64_t total_weight_ = 0;
  int64_t placed_after_weight_ = 0;
};

}  // namespace tessera
