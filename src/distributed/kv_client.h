// Row operations on named, row-sharded tensors, routed to the partitions
// that own the rows: the local partition's rows are read straight from
// memory, the others' by requests sent together and awaited together.
#pragma once

#include <cstdint>

#include "tessera/distributed/context.h"
#include "tessera/base/array.h"
#include "net/message.h"
#include "net/transport.h"
#include "tessera/store/sparse_step.h"
#include "tessera/store/tensor.h"

namespace tessera::distributed {

// Rows `ids` (IDs of spec.policy's space) in request order.
Array pull_rows(Context& ctx, const store::TensorSpec& spec, const int64_t* ids, int64_t count);
// The same through another thread's connection (Context::connect()), whose
// requests start `rotation` servers further along each partition's list.
Array pull_rows(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec, const int64_t* ids,
                int64_t count);
// The same rows written into `out` instead of a new array: row i (ids[i])
// goes to row positions[i] of `out`, or row i when positions is null. `out`
// holds spec's rows (row_bytes() each) up to the largest place written.
void pull_rows_into(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec,
                    const int64_t* ids, int64_t count, void* out, const int64_t* positions);
// Where rows `ids` can be read in this process, without copying the local
// ones: rows[i] points at row ids[i]. Local rows point into the partition's
// memory; the rest are pulled (as pull_rows_into) into a new *pulled, and
// point there. Valid while the partition is loaded and *pulled lives.
void locate_rows(Context& ctx, net::Client* client, int rotation, const store::TensorSpec& spec, const int64_t* ids,
                 int64_t count, const char** rows, Array* pulled);
// Writes (or adds) `values` (count rows of spec's row shape) to rows `ids`.
void push_rows(Context& ctx, const store::TensorSpec& spec, const int64_t* ids, int64_t count, const void* values,
               store::PushMode mode);
// One sparse-optimizer step; `ids` must be unique.
void sparse_step(Context& ctx, const std::string& weight, const std::string& policy, const int64_t* ids,
                 int64_t count, const float* grads, int64_t row_elems, const store::SparseStepParams& params);
// The same without waiting for the servers: returns the requests in flight
// on ctx.client(), for ctx.client().wait(). The local partition's rows are
// updated in place before it returns (ctx.writes_in_place()).
std::vector<uint64_t> send_sparse_step(Context& ctx, const std::string& weight, const std::string& policy,
                                       const int64_t* ids, int64_t count, const float* grads, int64_t row_elems,
                                       const store::SparseStepParams& params);

// Creates the tensor on every machine (called by one trainer), or accepts an
// existing one of the same type and shape.
void create_tensor(Context& ctx, const store::TensorSpec& spec);
void delete_tensor(Context& ctx, const std::string& name);

}  // namespace tessera::distributed
