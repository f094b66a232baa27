// One sparse-optimizer step on the rows a gradient touched, as the owning server (or a standalone trainer)
// applies it. The optimizer's state lives in tensors beside the weight, named by optimizer_state_name().
//
// apply_sparse_step() changes the weight's and the state tensors' rows in place and keeps no reference to its
// arguments. Each row is updated under its stripe of `locks`, so processes and threads sharing the tensors may
// step at once without losing writes; `rows` must be unique within one call. Errors are tessera::Error: an
// unknown optimizer kind, or whatever `lookup` throws for a missing tensor (naming it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/store/tensor.h"

namespace tessera::store {

class RowLocks;  // internal: striped locks in shared memory

// kRowAdagrad: DGL-KE's Adagrad, one accumulator per row.
enum class SparseOptimizer : int64_t { kAdagrad = 1, kAdam = 2, kRowAdagrad = 3 };

// Hyper-parameters travel with each step (lr may follow a schedule).
struct SparseStepParams {
  SparseOptimizer kind = SparseOptimizer::kAdagrad;
  double lr = 0.01, eps = 1e-10, beta1 = 0.9, beta2 = 0.999;
  // Adagrad's: what one gradient's squares count for in the sums. A replica that W trainers step apart between
  // merges counts its own W times (kge's relation replicas); a server's tensor is the shared one, so 1 (the wire
  // does not carry it).
  double state_weight = 1.0;
};

// "<weight>.adagrad_sum", "<weight>.row_adagrad_sum", "<weight>.adam_m", "<weight>.adam_v", "<weight>.adam_step".
std::string optimizer_state_name(const std::string& weight, const char* state);

// The tensors a step of `kind` on `weight` reads and writes: the weight, then its state tensors.
std::vector<std::string> sparse_step_tensors(SparseOptimizer kind, const std::string& weight);

// The row shape of each state tensor of `kind` (sparse_step_tensors' order, the weight left out) for a weight whose
// rows are `dim` floats: {} (one float per row) for row-wise Adagrad's sums and Adam's step counts, {dim} for the
// others.
std::vector<std::vector<int64_t>> optimizer_state_row_shapes(SparseOptimizer kind, int64_t dim);

// `lookup` returns a tensor by name or throws. Rows must be unique.
void apply_sparse_step(const std::function<LocalTensor&(const std::string&)>& lookup, const std::string& weight,
                       const SparseStepParams& params, const int64_t* rows, int64_t count, const float* grads,
                       RowLocks& locks);

}  // namespace tessera::store
