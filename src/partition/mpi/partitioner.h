// The distributed partitioner's state and phases (dist_partition.h runs
// them): one object per MPI rank, holding this rank's share of the graph
// from reading the chunks to writing its partition. Its methods are split
// over dist_partition.cc (reading, assignment, numbering, writing) and
// partitioner_shuffle.cc (moving edges and data rows to their parts).
//
// Internal header, linked into the tessera binary only (MPI).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/chunked_format.h"
#include "partition/mpi/chunk_streams.h"
#include "partition/mpi/dist_partition.h"
#include "partition/mpi/id_layout.h"
#include "partition/mpi/mpi_world.h"
#include "partition/mpi/scotch_partition.h"
#include "partition/mpi/scotch_strategy.h"
#include "tessera/base/timer.h"
#include "tessera/partition/partition_config.h"

namespace tessera::mpi_partition {

// Edges per all-to-all round, and data bytes per round: the bounded buffers.
constexpr int64_t kBatchEdges = int64_t{1} << 20;
constexpr int64_t kBatchBytes = int64_t{64} << 20;
// A vertex with this flag in an adjacency message only counts an in-edge
// (a self-loop): METIS and PT-Scotch take no self-loops.
constexpr int64_t kInEdgeOnly = int64_t{1} << 62;
constexpr int64_t kInEdge = int64_t{1} << 61;
constexpr int64_t kIdMask = kInEdge - 1;

struct Arc {
  int64_t target, other;  // other: neighbour | kInEdge (target is the edge's destination) | kInEdgeOnly
};

struct ShuffledEdge {
  int64_t u, v, g;  // new source and destination IDs, global edge order
};

class Partitioner {
 public:
  Partitioner(const MpiWorld& world, const DistributedPartitionRequest& request)
      : world_(world), request_(request), options_(request.options), graph_(ChunkedGraph::load(request.input)) {
    if (options_.graph_name.empty()) options_.graph_name = graph_.graph_name;
    me_ = world.rank();
    ranks_ = world.size();
    parts_ = options_.num_parts;
  }

  int run();

 private:
  // Phases.
  std::vector<int64_t> train_nodes_here();
  LocalGraph adjacency();
  std::vector<int32_t> assign();
  void trace(const char* step, const LocalGraph& g) const;
  // Collective: `part` unchanged, or a failure naming an empty partition.
  std::vector<int32_t> require_no_empty_part(std::vector<int32_t> part) const;
  void number(const std::vector<int32_t>& part);
  void shuffle_nodes(const std::vector<int32_t>& part);
  void shuffle_edges();
  Array shuffle_rows(const ChunkFiles& files, const DataLayout& data, int64_t key_base, int64_t owned_rows,
                     bool edge_rows, int type);
  void write(double* write_s);

  int part_of_new(int64_t id) const { return IdLayout::range_of(part_start_, id); }
  int64_t first_vertex() const { return layout_.vertex_start[me_]; }
  int64_t local_vertices() const { return layout_.vertex_start[me_ + 1] - layout_.vertex_start[me_]; }

  const MpiWorld& world_;
  const DistributedPartitionRequest& request_;
  PartitionOptions options_;
  ChunkedGraph graph_;
  int me_ = 0, ranks_ = 1, parts_ = 1;
  IdLayout layout_;

  // After number(): the new ID of each node this rank holds for PT-Scotch,
  // the node map, and each part's first new ID.
  std::vector<int64_t> new_id_;
  std::vector<std::vector<IdRange>> node_map_, edge_map_;
  std::vector<int64_t> part_start_;
  // This rank's partition (part me_).
  std::vector<int64_t> orig_nid_, orig_eid_, indptr_, indices_, eids_;
  std::vector<int32_t> etypes_;
  std::vector<int64_t> sorted_g_, eid_of_sorted_;  // for placing edge data
  std::vector<int32_t> edge_part_;                 // part of each edge this rank read, by stream position
  std::map<std::string, std::map<std::string, Array>> node_arrays_, edge_arrays_;
  std::map<std::string, std::map<std::string, ArraySchema>> node_schema_, edge_schema_;
  int64_t cut_edges_ = 0;
  int64_t folded_nodes_ = 0;  // placed beside PT-Scotch, not by it (periphery_fold.h)
  int64_t sampled_out_ = 0;   // adjacency entries PT-Scotch did not see (hub_sampling.h)
  double scotch_imbalance_ = kScotchDefaultImbalance;  // the imbalance PT-Scotch was allowed (imbalance_with_room)
  Timer assign_timer_;        // for trace()
};

}  // namespace tessera::mpi_partition
