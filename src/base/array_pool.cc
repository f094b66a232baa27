#include "base/array_pool.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "tessera/base/error.h"

namespace tessera {
namespace {

// Buffers are cut to whole 64 KiB, aligned for any vector load, and with a
// quarter's headroom: consecutive batches differ by a few percent in size,
// and one buffer then serves all of them.
constexpr size_t kGrain = 64 << 10;
constexpr size_t kAlignment = 64;

size_t capacity_for(size_t bytes) {
  const size_t wanted = bytes + bytes / 4;
  return std::max<size_t>(kGrain, (wanted + kGrain - 1) / kGrain * kGrain);
}

}  // namespace

struct ArrayPool::Shared {
  struct Buffer {
    void* data = nullptr;
    size_t capacity = 0;
  };

  explicit Shared(size_t max_free) : max_free(max_free) {}
  ~Shared() {
    for (Buffer& b : idle) std::free(b.data);
  }

  // Keeps `b` among the largest `max_free` idle buffers, or frees it.
  void give_back(Buffer b) {
    std::lock_guard<std::mutex> lock(mutex);
    idle.push_back(b);
    std::sort(idle.begin(), idle.end(), [](const Buffer& x, const Buffer& y) { return x.capacity > y.capacity; });
    while (idle.size() > max_free) {
      std::free(idle.back().data);
      idle.pop_back();
    }
  }

  const size_t max_free;
  mutable std::mutex mutex;
  std::vector<Buffer> idle;  // largest first
};

ArrayPool::ArrayPool(size_t max_free) : shared_(std::make_shared<Shared>(max_free)) {}

Array ArrayPool::take(DType dtype, std::vector<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 0)) * dtype_size(dtype);
  Shared::Buffer b;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto& idle = shared_->idle;
    // The smallest idle buffer that fits (the list is largest first).
    for (size_t i = idle.size(); i-- > 0;) {
      if (idle[i].capacity < bytes) continue;
      b = idle[i];
      idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (b.data == nullptr) {
    b.capacity = capacity_for(bytes);
    b.data = std::aligned_alloc(kAlignment, b.capacity);
    if (b.data == nullptr)
      fail("out of memory allocating {} bytes for a pooled {} array of {} elements", b.capacity, dtype_name(dtype),
           elements);
  }
  std::weak_ptr<Shared> pool = shared_;
  std::shared_ptr<const void> owner(b.data, [pool, b](const void*) {
    if (const auto alive = pool.lock()) alive->give_back(b);
    else std::free(b.data);
  });
  return Array::wrap(dtype, std::move(shape), b.data, std::move(owner));
}

size_t ArrayPool::idle_buffers() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->idle.size();
}

}  // namespace tessera
