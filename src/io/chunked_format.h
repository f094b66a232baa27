// DGL's chunked graph format: a metadata.json naming, per edge type, the chunk files of its edges (CSV
// "src dst" lines or numpy [E, 2]) and, per node / edge type and name, the numpy chunks of its data, so a
// graph never has to exist as one file. Both of DGL's spellings of the counts are read:
//
//   {"graph_name": "g", "node_type": ["paper", "author"],
//    "num_nodes_per_chunk": [[50, 50], [30, 30]],        // or "num_nodes_per_type": [100, 60]
//    "edge_type": ["author:writes:paper"],
//    "num_edges_per_chunk": [[200, 200]],                // or "num_edges_per_type": [400]
//    "edges": {"author:writes:paper": {"format": {"name": "csv", "delimiter": " "},
//                                      "data": ["edges/writes-0.csv", "edges/writes-1.csv"]}},
//    "node_data": {"paper": {"feat": {"format": {"name": "numpy"}, "data": ["paper-feat-0.npy", ...]},
//                            "train_mask": {...}}},
//    "edge_data": {"author:writes:paper": {"weight": {"format": {"name": "numpy"}, "data": [...]}}}}
//
// IDs in edge files are type-local. Node data named train_mask / val_mask / test_mask is the split (nonzero =
// in the set), as in DGL's examples. Paths are absolute or relative to the metadata's folder. A data name's
// chunks may be cut anywhere (DGL: "any number of files"): only their rows, in order, must add up to the type's
// count. A machine reads only the chunks given to it (chunk_reader), so the files may lie on local disks.
//
// Errors are tessera::Error naming metadata.json and the key, or the chunk file and what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/graph/dataset.h"

namespace tessera {

struct ChunkFiles {
  std::string format = "numpy";  // csv | numpy
  std::string delimiter = " ";   // csv
  std::vector<std::string> paths;  // resolved against the metadata's folder
  std::string where;               // "DIR/metadata.json: edges[\"a:r:b\"]", for messages
  std::string key;                 // "edges[\"a:r:b\"]" alone, for messages about one chunk
};

struct ChunkedGraph {
  std::string dir;
  std::string graph_name;
  std::vector<std::string> node_types;
  std::vector<int64_t> num_nodes;  // per node type
  std::vector<std::string> edge_types;  // canonical "src:rel:dst"
  std::vector<int64_t> num_edges;       // per edge type
  // Edges per chunk, per edge type: from num_edges_per_chunk, or an empty
  // list for every type when metadata.json gave only num_edges_per_type (a
  // CSV chunk's rows are then known only once it is read).
  std::vector<std::vector<int64_t>> edges_per_chunk;
  std::vector<ChunkFiles> edges;                              // per edge type
  std::vector<std::map<std::string, ChunkFiles>> node_data;   // per node type: name -> chunks
  std::vector<std::map<std::string, ChunkFiles>> edge_data;   // per edge type: name -> chunks

  // Reads and checks `dir`/metadata.json (keys, types, counts, one chunk list
  // per edge type); reads no chunk.
  static ChunkedGraph load(const std::string& dir);

  int node_type_index(const std::string& name) const;  // -1 when absent
  // Source and destination node type of edge type k.
  int src_type(int k) const;
  int dst_type(int k) const;
  int64_t total_nodes() const;
  int64_t total_edges() const;
};

// "src:rel:dst", the only spelling of an edge type the format has, split;
// anything else fails naming `where`.
struct EdgeTypeName {
  std::string src, relation, dst;
};
EdgeTypeName split_edge_type(const std::string& canonical, const std::string& where);

// The split masks' names in node_data, train / val / test.
inline constexpr const char* kSplitMasks[] = {"train_mask", "val_mask", "test_mask"};
bool is_split_mask(const std::string& name);

// Edges of chunk `c` of edge type `k`, type-local IDs, appended to src / dst.
// Checks every ID against its type's count and, where metadata.json gives
// it, the chunk's edge count; errors name the file (and line, for CSV).
void read_edge_chunk(const ChunkedGraph& graph, int k, int c, std::vector<int64_t>* src, std::vector<int64_t>* dst);

// Rows of a data chunk (numpy; mapped, not copied). Errors name the file.
Array read_data_chunk(const ChunkFiles& files, size_t c);

// Rows in a numpy data chunk, from its header alone.
int64_t data_chunk_rows(const ChunkFiles& files, size_t c);

// Which of `ranks` machines reads chunk `c` of `chunks`: contiguous blocks,
// so with as many chunks as machines each reads one.
int chunk_reader(int64_t c, int64_t chunks, int ranks);

// The whole graph in one process (single-machine partitioning of chunked
// input): every chunk read, split masks turned into ID lists.
Dataset read_chunked_dataset(const std::string& dir);

// Writes `dataset` in the chunked format with `num_chunks` chunks per edge
// type and per data array (numpy edges, numpy data, masks for the split),
// atomically. Names and dataset-level arrays have no place in the format and
// are left out (a warning names them).
void write_chunked_dataset(const Dataset& dataset, const std::string& dir, int num_chunks);

}  // namespace tessera
