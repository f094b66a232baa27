// `tessera partition --dry-run`: what each rank of a distributed partitioning will hold at its peak, from
// metadata.json and the headers of its own chunks, before any edge is read. The figures follow the phases of
// dist_partition.cc; bench/partition_scale.sh prints them beside the measured peaks.
#pragma once

#include <cstdint>
#include <string>

#include "io/chunked_format.h"
#include "partition/mpi/id_layout.h"
#include "partition/mpi/mpi_world.h"

namespace tessera {

struct MemoryEstimate {
  int64_t edges_read = 0;        // edges in this rank's chunks
  int64_t adjacency_bytes = 0;   // building PT-Scotch's distributed graph
  int64_t partition_bytes = 0;   // inside PT-Scotch
  int64_t shuffle_bytes = 0;     // this rank's partition: CSC, ID maps and data rows
  int64_t peak_bytes = 0;
  // Without --balance-edges, parts balance nodes and a part's edges are not bounded (RMAT 1M / 20M into 3 parts:
  // one took 75% of them, 78% with METIS): the shuffle phase if this rank's part took every edge. 0 when edges
  // are balanced.
  int64_t skewed_shuffle_bytes = 0;

  std::string describe(int rank, const std::string& host) const;
};

// Collective (ranks agree on each data array's row size).
MemoryEstimate estimate_memory(const MpiWorld& world, const ChunkedGraph& graph, const IdLayout& layout,
                               bool edges_balanced);

}  // namespace tessera
