// RemoteRowCache: rows of a read-only node tensor (features) that live on other machines, copied once into this
// process, so that the mini-batches that need them read memory instead of the network. Neighbour sampling
// reaches a node about as often as it has neighbours, so on skewed graphs (RMAT, products, papers) a few
// percent of the nodes, the ones of largest in-degree, are most of what a trainer pulls from other machines;
// every row that comes from here is a row that no server gathers, encrypts and sends. GraphLearn-for-PyTorch
// keeps a cache of the same kind; DistDGL pulls every remote row every time.
//
// Each remote partition's main server names its nodes of largest in-degree (one request each; on a graph of
// several node types, those of the tensor's type, by in-degree over every edge type: a cache per typed
// tensor, as ogbn-mag's paper features); their rows are pulled once, in ID order, and found again through a
// rank bitmap (1.5 bits per node of the type: no hash table, no per-node index). The tensor must not change while the cache is used: the cache never sees a push.
//
// build() is not collective; it uses the Context's connection, so it runs on the Context's thread. pull() only
// reads the cache, so any number of sampler threads may call it at once, each with its own connection. Errors
// are tessera::Error: a fraction outside [0, 1], a tensor that is not indexed by nodes, or a server that does
// not answer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/distributed/context.h"
#include "tessera/store/tensor.h"

namespace tessera::net {
class Client;
}

namespace tessera::distributed {

class RemoteRowCache {
 public:
  // Caches `fraction` of every other partition's nodes of the tensor's node
  // type (all partitions on a client machine), those of largest in-degree,
  // in at most `max_bytes` of rows (each partition then gets its share). Null when fraction is 0 or
  // the process is standalone (every row is local then).
  static std::shared_ptr<RemoteRowCache> build(Context& ctx, const store::TensorSpec& spec, double fraction,
                                               int64_t max_bytes);

  const store::TensorSpec& spec() const { return spec_; }
  int64_t num_rows() const { return rows_.empty_handle() ? 0 : rows_.rows(); }
  bool contains(int64_t id) const;

  // Rows `ids` in request order, as pull_rows (distributed/kv_client.h)
  // gives them: cached rows from memory, the rest through `client`.
  Array pull(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count) const;
  // The same rows written into `out` (count rows of spec().row_bytes()).
  void pull_into(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count,
                 void* out) const;

  // Where rows `ids` can be read without a copy, as locate_rows
  // (distributed/kv_client.h) finds them: cached rows point into the cache,
  // local ones into the partition, the rest into a new *pulled.
  void locate(Context& ctx, net::Client* client, int rotation, const int64_t* ids, int64_t count, const char** rows,
              Array* pulled) const;
  // IDs of other machines' rows asked for since build(), and how many of
  // them were found here.
  int64_t remote_ids_asked() const { return asked_.load(); }
  int64_t remote_ids_found() const { return found_.load(); }

 private:
  RemoteRowCache(store::TensorSpec spec, int64_t id_space, std::vector<int64_t> ids, int64_t local_first,
                 int64_t local_end);
  int64_t slot(int64_t id) const;  // the row's place in rows_, or -1
  // Each ID's slot (or -1), and the misses' positions and IDs; counts the
  // remote IDs asked and found.
  void find_slots(const int64_t* ids, int64_t count, int64_t* slots, std::vector<int64_t>* miss_pos,
                  std::vector<int64_t>* miss_ids) const;

  store::TensorSpec spec_;
  std::vector<uint64_t> bits_;   // bit i: ID i is cached
  std::vector<int64_t> before_;  // cached IDs below word w's first ID
  Array rows_;                   // the cached rows, in ID order
  int64_t local_first_, local_end_;  // this machine's IDs (none on a client machine)
  mutable std::atomic<int64_t> asked_{0}, found_{0};
};

// A process's caches, one per tensor at most (a loader's, a trainer's).
using RemoteRowCaches = std::vector<std::shared_ptr<const RemoteRowCache>>;

}  // namespace tessera::distributed
