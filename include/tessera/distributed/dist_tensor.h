// DistTensor: a named tensor whose rows are sharded by a partition policy (the nodes of a node type, or the
// edges of an edge type). Handles are cheap to copy and share one state; a handle keeps a pointer to its
// Context, which must outlive it. pull() returns a new Array the caller owns. The creating constructor is
// collective; open(), pull() and push() are not. Rows pushed by one trainer are seen by others' later pulls,
// with no ordering between trainers beyond what the caller adds (barriers).
//
// Threading: a handle uses its Context's connection, so it belongs to the Context's thread. Errors are
// tessera::Error naming the tensor: a bad name or policy, a missing tensor (open lists what exists), an ID out
// of range, values of the wrong dtype or shape, or a server that does not answer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/distributed/context.h"
#include "tessera/base/array.h"
#include "tessera/store/tensor.h"

namespace tessera::distributed {

class DistTensor {
 public:
  DistTensor() = default;
  // Collective: every trainer calls it with the same arguments. Creates the
  // tensor (rows per `init`), or attaches when one of that name, type and
  // shape exists. A non-persistent tensor is deleted when trainer 0's last
  // handle goes; a persistent one lives until the job ends and can be
  // opened again by name.
  DistTensor(Context& ctx, const std::string& name, DType dtype, std::vector<int64_t> row_shape,
             const std::string& policy, store::Initializer init = {}, bool persistent = false);
  // An existing tensor: a partition array ("node/<ntype>/<feature>") or one
  // created before; the error lists what exists when nothing matches.
  static DistTensor open(Context& ctx, const std::string& name);

  const store::TensorSpec& spec() const;
  const std::string& name() const { return spec().name; }
  int64_t num_rows() const;  // across all partitions
  std::vector<int64_t> shape() const;

  Array pull(const int64_t* ids, int64_t count) const;
  Array pull(const std::vector<int64_t>& ids) const { return pull(ids.data(), static_cast<int64_t>(ids.size())); }
  // `values`: count rows of the tensor's row shape and dtype.
  void push(const int64_t* ids, int64_t count, const Array& values,
            store::PushMode mode = store::PushMode::kAssign) const;
  void push(const std::vector<int64_t>& ids, const Array& values,
            store::PushMode mode = store::PushMode::kAssign) const {
    push(ids.data(), static_cast<int64_t>(ids.size()), values, mode);
  }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace tessera::distributed
