// ArrayPool (base/array_pool.h): a buffer whose arrays are gone serves the
// next take() that fits, buffers in use are never handed out twice, the
// idle list keeps its cap, and arrays may outlive the pool.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "base/array_pool.h"

namespace tessera {
namespace {

TEST(ArrayPool, AReturnedBufferServesTheNextTakeThatFits) {
  ArrayPool pool(4);
  const void* first = nullptr;
  {
    Array a = pool.take(DType::kFloat32, {1000, 100});
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{1000, 100}));
    EXPECT_EQ(a.dtype(), DType::kFloat32);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % 64, 0u) << "pooled buffers are 64-byte aligned";
    std::memset(a.mutable_raw(), 1, a.nbytes());  // the whole shape is writable
    first = a.raw();
    Array copy = a;  // a copy shares the buffer: it stays out while either lives
    a = Array();
    EXPECT_EQ(pool.idle_buffers(), 0u);
  }
  EXPECT_EQ(pool.idle_buffers(), 1u);
  // A few percent larger, as the next batch: the headroom takes it.
  const Array b = pool.take(DType::kFloat32, {1040, 100});
  EXPECT_EQ(b.raw(), first);
  EXPECT_EQ(pool.idle_buffers(), 0u);
  // Far larger: a new buffer.
  const Array c = pool.take(DType::kFloat32, {4000, 100});
  EXPECT_NE(c.raw(), first);
}

TEST(ArrayPool, BuffersInUseAreNeverSharedAndTheIdleListKeepsItsCap) {
  ArrayPool pool(2);
  std::set<const void*> seen;
  {
    std::vector<Array> held;
    for (int i = 0; i < 5; ++i) {
      held.push_back(pool.take(DType::kInt64, {100 + i}));
      EXPECT_TRUE(seen.insert(held.back().raw()).second) << "take " << i << " got a buffer already in use";
    }
  }
  EXPECT_EQ(pool.idle_buffers(), 2u) << "five came back, the cap is two";
  // An empty shape is a valid array too.
  const Array empty = pool.take(DType::kFloat32, {0, 100});
  EXPECT_EQ(empty.numel(), 0);
}

TEST(ArrayPool, ArraysMayOutliveThePool) {
  Array kept;
  {
    ArrayPool pool;
    kept = pool.take(DType::kFloat64, {64});
    kept.data<double>()[63] = 2.5;
  }
  EXPECT_EQ(kept.data<double>()[63], 2.5);  // the buffer is freed with the array, not with the pool
}

}  // namespace
}  // namespace tessera
