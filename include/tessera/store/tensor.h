// Tensors as one machine holds them: the rows of a named, row-sharded tensor that this machine's partition
// owns. Rows live in a read-only mapping of a partition file (features, masks) or in shared memory (tensors
// created at run time: embeddings, optimizer state).
//
// A LocalTensor is a value: its Array and, for a shared-memory tensor, its shared SharedMemory handle keep the
// rows mapped while any copy lives; the segment's name outlives it until unlinked. Nothing here takes locks:
// writers of shared rows use the row locks. Initializing splits rows over OpenMP threads and gives the same
// values whatever the thread count. Errors are tessera::Error: a bad spec (from_json, naming the field), an
// unknown initializer or one that needs float rows, or a segment that cannot be created or attached.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/store/shared_memory.h"

namespace tessera::store {

// How a created tensor's rows start out. Random rows depend only on the seed
// and the row's ID, not on how the graph was partitioned.
struct Initializer {
  std::string kind = "zeros";  // zeros | uniform | normal
  double a = 0, b = 0;         // uniform: [a, b); normal: mean a, std b
  uint64_t seed = 0;
};

// What a push does to the rows it names: overwrite them, or add to them
// (concurrent adds to one row from several trainers all land).
enum class PushMode : int64_t { kAssign = 0, kAdd = 1 };

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> row_shape;  // shape of one row
  std::string policy;              // "node:<ntype>" or "edge:<etype>"
  Initializer init;
  bool persistent = false;

  std::string to_json() const;
  static TensorSpec from_json(const std::string& text);  // throws Error on bad input
  int64_t row_elems() const;
  size_t row_bytes() const;  // row_elems() values of dtype
  std::vector<int64_t> shape(int64_t rows) const;  // {rows, row_shape...}
};

struct LocalTensor {
  TensorSpec spec;
  int64_t first_id = 0;  // global (type-local) ID of local row 0
  Array rows;            // [local rows, row_shape...]
  bool writable = false;
  std::shared_ptr<SharedMemory> shm;  // set for shared-memory tensors
  uint64_t lock_key = 0;              // hashes rows onto lock stripes

  int64_t num_rows() const { return rows.rows(); }
};

// Fills a fresh tensor's rows per its initializer.
void initialize_rows(LocalTensor& tensor);

}  // namespace tessera::store

namespace tessera::store {

// A tensor with `rows` local rows in a new shared-memory segment, initialized.
LocalTensor create_shared_tensor(const TensorSpec& spec, int64_t first_id, int64_t rows, const std::string& segment);
// The same tensor mapped by another process of the machine.
LocalTensor attach_shared_tensor(const TensorSpec& spec, int64_t first_id, const std::string& segment);
// A private tensor (standalone mode), initialized.
LocalTensor create_heap_tensor(const TensorSpec& spec, int64_t first_id, int64_t rows);

}  // namespace tessera::store
