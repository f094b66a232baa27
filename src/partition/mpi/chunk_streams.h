// A rank's share of the chunked input, read in bounded batches: its edge chunks (as homogeneous source and
// destination IDs with their place in the global edge order), and the layout of a data array's chunks (rows
// per chunk, dtype, row shape), agreed on by all ranks from the headers each reads of its own chunks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/chunked_format.h"
#include "partition/mpi/id_layout.h"
#include "partition/mpi/mpi_world.h"

namespace tessera {

// Counts every edge chunk (reading a CSV chunk whose count metadata.json
// does not give) and checks the totals against metadata.json. Collective.
IdLayout agree_id_layout(const MpiWorld& world, const ChunkedGraph& graph);

// Collective: one pass over every rank's edges, then layout->vertex_start
// moved so that each rank holds about as many nodes plus adjacency entries as
// the others. Equal node ranges are far apart in power-law graphs, whose hubs
// cluster at low IDs (RMAT 1M nodes / 20M edges on 3 ranks: 26.7M, 8.8M and
// 3.4M adjacency entries), and the largest rank sets the memory a machine needs.
void balance_vertex_ranges(const MpiWorld& world, const ChunkedGraph& graph, IdLayout* layout);

class EdgeStream {
 public:
  EdgeStream(const ChunkedGraph& graph, const IdLayout& layout, int rank, int ranks);
  // Edges in this rank's chunks.
  int64_t total() const { return total_; }
  // Up to `max` further edges (u, v homogeneous; g their global order);
  // empty vectors once all are read.
  void next(int64_t max, std::vector<int64_t>* u, std::vector<int64_t>* v, std::vector<int64_t>* g);
  // Position in this stream of global edge g, which must be in one of its chunks.
  int64_t position_of(int64_t g) const;
  // Which rank reads global edge g.
  int reader_of(int64_t g) const;

 private:
  const ChunkedGraph& graph_;
  const IdLayout& layout_;
  int ranks_;
  std::vector<std::pair<int, int>> chunks_;  // (edge type, chunk) read here, in global order
  std::vector<int64_t> chunk_first_g_;       // global order of each chunk's first edge
  std::vector<int64_t> chunk_position_;      // stream position of each chunk's first edge
  int64_t total_ = 0;
  size_t next_chunk_ = 0;
  std::vector<int64_t> src_, dst_;
  int64_t read_ = 0;  // edges of the current chunk already returned
  int64_t chunk_g_ = 0;
  int src_offset_ = 0, dst_offset_ = 0;
};

struct DataLayout {
  std::vector<int64_t> chunk_start;  // [C + 1] first row of each chunk
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;        // [rows, ...]
  size_t row_bytes = 0;
};

// From the headers of this rank's chunks, gathered: rows must add up to
// `rows` and every chunk must agree on dtype and row shape. Collective.
DataLayout agree_data_layout(const MpiWorld& world, const ChunkFiles& files, int64_t rows, const std::string& what);

}  // namespace tessera
