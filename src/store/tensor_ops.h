// The row operations servers (and standalone trainers) apply to local
// tensors. Row indices are local; every index is bounds-checked and a bad one
// throws tessera::Error before anything is written.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/base/array.h"
#include "store/row_locks.h"
#include "tessera/store/tensor.h"

namespace tessera::store {

// Checks rows[i] in [0, tensor rows); `who` prefixes the error.
void check_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count);

// The locks a read of `tensor` takes: `locks` for a writable tensor, whose
// rows pushes and sparse optimizer steps of other threads and processes
// write in place (an unlocked copy could see half an update); none for one
// loaded read-only from the partition files (the features: no cost there).
inline RowLocks* read_locks(const LocalTensor& tensor, RowLocks& locks) {
  return tensor.writable ? &locks : nullptr;
}

// Copies row `row` of `tensor` (`row_bytes`) to `out`, under the row's stripe
// lock when `locks` is not null. The row is not bounds-checked.
inline void copy_row(const LocalTensor& tensor, int64_t row, size_t row_bytes, RowLocks* locks, void* out) {
  const char* src = static_cast<const char*>(tensor.rows.raw()) + row * static_cast<int64_t>(row_bytes);
  if (locks == nullptr) {
    std::memcpy(out, src, row_bytes);
    return;
  }
  RowGuard guard(*locks, RowLocks::stripe(tensor.lock_key, row));
  std::memcpy(out, src, row_bytes);
}

// Gathers rows into `out` (count x row bytes), in parallel for large batches;
// each row of a writable tensor under its stripe lock (read_locks).
void gather_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count, RowLocks& locks, void* out);
Array gather_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count, RowLocks& locks);

// tensor[rows[i]] = values[i], each row under its stripe lock (so a locked
// reader never sees half of it).
void assign_rows(LocalTensor& tensor, const int64_t* rows, int64_t count, const void* values, RowLocks& locks);
// tensor[rows[i]] += values[i], atomically per row (duplicates accumulate).
void add_rows(LocalTensor& tensor, const int64_t* rows, int64_t count, const void* values, RowLocks& locks);

struct AdagradParams {
  float lr = 0.01f, eps = 1e-10f;
  // What one gradient's squares count for in the sum. A replica that W
  // trainers update apart between merges counts its own W times: its
  // expectation of the shared sum, which the merge then makes exact.
  float state_weight = 1.0f;
};
struct AdamParams {
  float lr = 0.001f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

// torch.optim.Adagrad on the given rows (state: running sum of squared
// gradients, same shape). Rows must be unique: callers sum duplicates first.
void adagrad_rows(LocalTensor& weight, LocalTensor& state_sum, const int64_t* rows, int64_t count,
                  const float* grads, const AdagradParams& p, RowLocks& locks);

// DGL-KE's row-wise Adagrad: one accumulator per row (state: [rows] of one
// float) that adds the mean squared gradient of the row, then
// w -= lr * g / (sqrt(state) + eps). Rows must be unique.
void row_adagrad_rows(LocalTensor& weight, LocalTensor& state_sum, const int64_t* rows, int64_t count,
                      const float* grads, const AdagradParams& p, RowLocks& locks);

// torch.optim.Adam on the given rows, with a step count per row (a row's
// bias correction counts the steps that touched it, as DGL's SparseAdam).
void adam_rows(LocalTensor& weight, LocalTensor& exp_avg, LocalTensor& exp_avg_sq, LocalTensor& steps,
               const int64_t* rows, int64_t count, const float* grads, const AdamParams& p, RowLocks& locks);

}  // namespace tessera::store
