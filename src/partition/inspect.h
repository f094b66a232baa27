// A partitioned graph checked and summarised (`tessera inspect`, and the
// report's page of a run): validates every invariant of a partitioned graph and
// summarises it (owned nodes, in-edges, training nodes, halo nodes, edge cut).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct PartSummary {
  int64_t owned_nodes = 0, in_edges = 0, train_nodes = 0, halo_nodes = 0, cut_edges = 0;
};

struct InspectReport {
  std::string graph_name, part_method;
  int num_parts = 0;
  int64_t num_nodes = 0, num_edges = 0;
  std::vector<PartSummary> parts;
  double edge_cut_ratio() const;
  // max / mean over partitions of a per-partition quantity (1.0 = perfect).
  double imbalance(int64_t PartSummary::*field) const;

  std::string table() const;
  std::string json() const;
};

// Throws tessera::Error naming the file and the broken invariant.
InspectReport inspect_partitions(const std::string& config_path);

}  // namespace tessera
