// Splitting a dataset into partitions for a cluster (DistDGL's partition_graph, DGL-KE's dglke_partition).
// Each partition owns one contiguous range of reshuffled node IDs per node type and stores the in-edges of the
// nodes it owns (1-hop halo), so every edge lives exactly once, with the owner of its destination.
//
// The functions only read the dataset and return values the caller owns; partition_dataset() writes the whole
// output into a staging directory renamed onto options.out_dir when complete (replacing what was there), so a
// failed run leaves no partial output. They parallelise internally with OpenMP on the calling thread and keep
// no state; run one at a time per output directory. Errors are tessera::Error naming the flag (--num-parts,
// --method, --graph-name) or what METIS could not do (too large for 32-bit idx_t, an empty partition).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/dataset.h"

namespace tessera {

struct PartitionOptions {
  std::string graph_name;
  int num_parts = 1;
  std::string method = "metis";  // metis | random
  bool balance_train = false;    // METIS constraint: training nodes per part
  bool balance_edges = false;    // METIS constraint: in-edges per part
  uint64_t seed = 0;
  std::string out_dir;
};

struct PartitionReport {
  double read_s = 0, assign_s = 0, reshuffle_s = 0, write_s = 0;
  int64_t cut_edges = 0;  // stored edges whose source lives in another part
  int64_t num_edges = 0;
  double edge_cut_ratio() const { return num_edges ? static_cast<double>(cut_edges) / num_edges : 0.0; }
};

// Partition assignment (one part id per homogeneous node ID).
std::vector<int32_t> metis_assignment(const Dataset& dataset, const PartitionOptions& options);
std::vector<int32_t> random_assignment(const Dataset& dataset, const PartitionOptions& options);

// Checks what can be checked before reading the dataset (part count, method),
// so a bad flag fails at once rather than after reading a large graph.
void check_partition_options(const PartitionOptions& options);

// Link prediction: takes `valid` and `test` edges (a fraction of the graph's
// connected node pairs when below 1, else a count) out of a graph with one
// node and one edge type — both directions of each pair — into
// dataset->held_out_edges, chosen by `seed`. Errors name --valid-edges /
// --test-edges: more edges than the graph can give, a typed graph.
void hold_out_edges(Dataset* dataset, double valid, double test, uint64_t seed);

// Assigns, reshuffles and writes `dataset` to options.out_dir (atomically).
PartitionReport partition_dataset(const Dataset& dataset, const PartitionOptions& options);

}  // namespace tessera
