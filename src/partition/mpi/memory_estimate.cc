#include "partition/mpi/memory_estimate.h"

#include <algorithm>

#include <fmt/format.h>

#include "partition/mpi/chunk_streams.h"
#include "partition/mpi/hub_sampling.h"

namespace tessera {
namespace {

// What a process holds before any of this: the binary, libtorch, MPI and
// PT-Scotch (a 2-rank run on a 1000-node graph peaks at 174 MB per rank).
constexpr int64_t kBaseBytes = int64_t{175} << 20;
// All-to-all batches: 2^20 edges as IDs, messages out and in.
constexpr int64_t kAllToAllBatchBytes = (int64_t{1} << 20) * (24 + 32 + 32);
// PT-Scotch's coarsening and ghost arrays, measured as a multiple of the
// adjacency (with edge weights) handed to it (bench/partition_scale.sh).
constexpr double kScotchFactor = 3.0;

}  // namespace

std::string MemoryEstimate::describe(int rank, const std::string& host) const {
  std::string line = fmt::format("rank {} ({}): reads {} edges; peak about {:.2f} GB (adjacency {:.2f}, PT-Scotch "
                                 "{:.2f}, partition and data {:.2f})",
                                 rank, host, edges_read, peak_bytes / 1e9, adjacency_bytes / 1e9,
                                 partition_bytes / 1e9, shuffle_bytes / 1e9);
  if (skewed_shuffle_bytes > 0)
    line += fmt::format("; up to {:.2f} GB if its part takes every edge, as parts balance nodes only (add "
                        "--balance-edges to bound it)",
                        std::max(peak_bytes, skewed_shuffle_bytes) / 1e9);
  return line;
}

MemoryEstimate estimate_memory(const MpiWorld& world, const ChunkedGraph& graph, const IdLayout& layout,
                               bool edges_balanced) {
  MemoryEstimate e;
  const int ranks = world.size();
  int64_t largest_chunk = 0;
  for (size_t k = 0; k < graph.edge_types.size(); ++k) {
    const auto& start = layout.edge_chunk_start[k];
    const int64_t chunks = static_cast<int64_t>(start.size()) - 1;
    for (int64_t c = 0; c < chunks; ++c)
      if (chunk_reader(c, chunks, ranks) == world.rank()) {
        e.edges_read += start[c + 1] - start[c];
        largest_chunk = std::max(largest_chunk, start[c + 1] - start[c]);
      }
  }
  // Balanced parts are assumed: a rank receives its share of each.
  const int64_t nodes = (layout.num_nodes() + ranks - 1) / ranks;
  const int64_t edges = (layout.num_edges() + ranks - 1) / ranks;
  const int64_t arcs = 2 * edges;
  const int64_t chunk_bytes = largest_chunk * 16;
  // Arcs as received (16 bytes, vector growth up to 2x) beside the adjacency lists.
  e.adjacency_bytes = kBaseBytes + kAllToAllBatchBytes + chunk_bytes + arcs * 16 * 3 / 2 + arcs * 8 + nodes * 24;
  // PT-Scotch sees at most about kSampledDegree entries per node (hub_sampling.h).
  const int64_t scotch_arcs = std::min(arcs, nodes * kSampledDegree);
  e.partition_bytes = kBaseBytes + static_cast<int64_t>(kScotchFactor * (scotch_arcs * 16 + nodes * 24));
  int64_t data_bytes = 0, largest_data_chunk = 0;
  for (size_t t = 0; t < graph.node_types.size(); ++t)
    for (const auto& [name, files] : graph.node_data[t]) {
      const DataLayout data = agree_data_layout(world, files, graph.num_nodes[t], name);
      data_bytes += static_cast<int64_t>(data.row_bytes) * ((graph.num_nodes[t] + ranks - 1) / ranks);
      for (size_t c = 0; c + 1 < data.chunk_start.size(); ++c)
        largest_data_chunk =
            std::max(largest_data_chunk, (data.chunk_start[c + 1] - data.chunk_start[c]) * int64_t(data.row_bytes));
    }
  for (size_t k = 0; k < graph.edge_types.size(); ++k)
    for (const auto& [name, files] : graph.edge_data[k]) {
      const DataLayout data = agree_data_layout(world, files, graph.num_edges[k], name);
      data_bytes += static_cast<int64_t>(data.row_bytes) * ((graph.num_edges[k] + ranks - 1) / ranks);
    }
  // Received edges (24 bytes, up to twice that while the vector grows) beside the CSC with its ID maps
  // (up to 40 bytes an edge with edge data), then the data rows.
  auto shuffle = [&](int64_t part_edges) {
    return kBaseBytes + kAllToAllBatchBytes + part_edges * 24 * 2 + part_edges * 40 + nodes * 24 + data_bytes +
           largest_data_chunk;
  };
  e.shuffle_bytes = shuffle(edges);
  if (!edges_balanced && ranks > 1) e.skewed_shuffle_bytes = shuffle(layout.num_edges());
  e.peak_bytes = std::max({e.adjacency_bytes, e.partition_bytes, e.shuffle_bytes});
  return e;
}

}  // namespace tessera
