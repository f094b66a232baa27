// What a DistDataLoader hands its trainer: one mini-batch's seeds, blocks, input rows and labels, owned by the
// batch (plain data; a moved or copied batch owns its own arrays' handles).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/sampling/block.h"
#include "tessera/sampling/edge_batch.h"
#include "tessera/sampling/pyg_layout.h"

namespace tessera::sampling {

// The input nodes of one node type (heterogeneous graphs): where they sit
// in blocks[0].src_nodes and their rows of the type's input tensor.
struct TypedInputs {
  int ntype = 0;
  std::vector<int64_t> positions;  // into blocks[0].src_nodes (pyg.nodes with pyg_layout), ascending
  std::vector<int64_t> ids;        // type-local IDs
  Array rows;
};

struct MiniBatch {
  int64_t index = 0;           // within the epoch
  std::vector<int64_t> seeds;  // output nodes (homogeneous IDs); edge batches: their pairs' nodes, sorted
  EdgeBatch edges;             // edge batches only: the pairs to score
  std::vector<Block> blocks;   // input layer first
  Array features;              // rows of blocks[0].src_nodes, or of pyg.nodes (empty if no feature was asked for);
                               // with LoaderOptions::aggregate_inputs, of blocks[0]'s destinations only (none for gcn)
  // LoaderOptions::aggregate_inputs: blocks[0]'s reduction of its sources'
  // feature rows, one row per destination.
  Array aggregated;
  std::vector<TypedInputs> inputs;  // heterogeneous graphs: input rows by node type (types with nodes only)
  Array labels;                // rows of seeds (empty if no label was asked for)
  // LoaderOptions::pyg_layout: the blocks as PyG's subgraph; `blocks` is then empty.
  PygSubgraph pyg;
  double sample_s = 0, fetch_s = 0;  // the sampler's time on this batch
  double sample_cpu_s = 0, fetch_cpu_s = 0;  // its thread's CPU time for the same
};

}  // namespace tessera::sampling
