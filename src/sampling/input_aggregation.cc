#include "sampling/input_aggregation.h"

#include <cstring>

#include "nn/gather_kernel.h"

namespace tessera::sampling {

void aggregate_input_rows(const float* rows, const Block& block, nn::CsrReduce reduce, int64_t f, float* dst_rows,
                          float* aggregated) {
  // Destinations are the first sources: one contiguous copy.
  if (dst_rows != nullptr && block.num_dst > 0)
    std::memcpy(dst_rows, rows, static_cast<size_t>(block.num_dst * f) * sizeof(float));
  if (block.num_dst == 0) return;
  nn::detail::gather_rows_at([rows, f](int64_t s) { return rows + s * f; }, block.indptr.data(),
                             block.indices.data(), block.num_dst, f, reduce, aggregated);
}

}  // namespace tessera::sampling
