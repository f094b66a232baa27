// How a DistDataLoader batches, samples ahead and fetches (sampling/data_loader.h): plain options, checked by the
// loader's constructor, which names the option at fault.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tessera/distributed/remote_row_cache.h"
#include "tessera/nn/csr_reduce.h"
#include "tessera/sampling/edge_batch.h"

namespace tessera::sampling {

struct LoaderOptions {
  int64_t batch_size = 1000;
  bool shuffle = true;
  bool drop_last = false;
  int num_samplers = 0;  // 0: sample on the caller's thread when it asks
  int prefetch = 0;      // batches ready ahead; 0: two per sampler
  uint64_t seed = 0;
  std::string feature = "feat", label = "label";  // node data to fetch; "" skips it
  // Heterogeneous graphs: the node type of the seeds (labels come from its
  // `label` data) and, for every node type, the full name of the tensor
  // whose rows are that type's inputs: a node feature ("node/paper/feat")
  // or a learnable embedding table. `feature` is unused then. Without
  // typed_inputs a heterogeneous graph's batches carry blocks (and labels)
  // only, and `feature` must be "".
  std::string seed_ntype;
  std::map<std::string, std::string> typed_inputs;
  // Lay each batch out as PyG's sampled subgraph on the sampler thread
  // (MiniBatch::pyg) and fetch the input rows (`feature`, or typed inputs)
  // of its nodes, in pyg.nodes' order.
  bool pyg_layout = false;
  // Rows of node tensors kept in this process (RemoteRowCache::build), at
  // most one per tensor: `feature`'s, or some typed inputs' (one per node
  // type with features). Each serves the fetches of its own tensor; the
  // other tensors' rows come from the servers. Loaders may share them.
  distributed::RemoteRowCaches feature_caches;
  // Reduce the input rows on the sampler thread: each batch carries
  // blocks[0]'s mean (kMean) or gcn mean (kGcnMean) of its sources' `feature`
  // rows (MiniBatch::aggregated), each row read once where it lies (no
  // copy of the local and cached ones), and the destinations' own rows (not
  // for kGcnMean) instead of every source's. For a first layer that
  // aggregates fixed features, as GraphSAGE's does: the trainer then does not
  // read ~6x as many rows again, from memory, batches later. Needs a float32
  // vector feature; not with typed inputs or pyg_layout.
  std::optional<nn::CsrReduce> aggregate_inputs;
  // Edge batches: the loader's items are edge IDs, and each batch's seeds are
  // the nodes of its positive and negative pairs (plan_edge_batch). Null:
  // node batches.
  std::shared_ptr<const EdgeBatchOptions> edges;
};

}  // namespace tessera::sampling
