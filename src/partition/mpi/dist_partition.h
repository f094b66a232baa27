// `tessera partition` run by every machine together, one MPI rank each, on DGL's chunked input: no process ever
// holds the whole graph. Each rank reads only its chunks; PT-Scotch assigns nodes to parts; node and edge IDs
// are reshuffled exactly as the single-machine partitioner does (partition-major, type-minor, original order
// within); edges, node data and edge data move to their owners in bounded all-to-all rounds; rank p writes
// part<p>, and the output (a shared folder, or one folder per machine) appears only when every rank has written.
//
// Phases, with what each rank holds (E edges, N nodes, R ranks):
//   read + adjacency  stream its edge chunks, send both directions of each edge to the rank that holds the
//                     source in PT-Scotch's block distribution: ~2E/R adjacency entries
//   assign            PT-Scotch on that distributed graph (or, with one rank, METIS or random, as today)
//   number            new IDs from counts per (part, type) gathered from every rank
//   shuffle           nodes' original IDs, edges (looked up, then sent to their destination's part),
//                     node data and edge data, each in batches
//   write             part<rank> in the single-machine layout; the config
#pragma once

#include <string>

#include "tessera/partition/partition.h"

namespace tessera {

struct DistributedPartitionRequest {
  std::string input;     // the chunked dataset's folder (holding metadata.json)
  PartitionOptions options;  // num_parts must equal the number of ranks
  bool dry_run = false;  // print each rank's memory estimate and stop
  bool json = false;     // rank 0 prints the report as one JSON object
};

// Runs in an MPI job (mpirun / srun, or a single process: MPI's singleton).
// Returns the exit code; on an error on any rank it prints one line naming
// the rank and host and ends every rank through MPI_Abort.
int run_distributed_partition(const DistributedPartitionRequest& request);

}  // namespace tessera
