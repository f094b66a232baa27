// ArrayPool: recycles the memory of large arrays that a producer fills again and again, such as a data loader's
// feature rows (about 12 MB per GraphSAGE mini-batch). A fresh buffer of that size comes from mmap, and the
// kernel faults in and zeroes each of its pages on first write; profiled on the 2-core host, that cost nearly
// as much CPU as copying the rows themselves (9.7% of a job's CPU time against 10.5%). A buffer that comes
// back here keeps its pages.
//
// take() returns an uninitialized Array of the asked shape over a pooled buffer at least that big. The buffer
// returns to the pool when the last Array sharing it goes, from any thread; if the pool is gone by then, it
// is freed. At most `max_free` idle buffers are kept (the largest ones); the pool holds nothing while all
// its buffers are in use. Thread-safe: any thread may take or return at any time.
//
// Errors: tessera::Error on an out-of-memory allocation, naming its size and dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/base/array.h"

namespace tessera {

class ArrayPool {
 public:
  explicit ArrayPool(size_t max_free = 4);

  // An array of `shape` whose contents are undefined (the caller fills it).
  Array take(DType dtype, std::vector<int64_t> shape);

  // Idle buffers held now, for tests and reports.
  size_t idle_buffers() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace tessera
