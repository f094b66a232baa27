#include "tessera/store/sparse_step.h"

#include "store/tensor_ops.h"
#include "tessera/base/error.h"

namespace tessera::store {

std::string optimizer_state_name(const std::string& weight, const char* state) { return weight + "." + state; }

std::vector<std::string> sparse_step_tensors(SparseOptimizer kind, const std::string& weight) {
  switch (kind) {
    case SparseOptimizer::kAdagrad: return {weight, optimizer_state_name(weight, "adagrad_sum")};
    case SparseOptimizer::kRowAdagrad: return {weight, optimizer_state_name(weight, "row_adagrad_sum")};
    case SparseOptimizer::kAdam:
      return {weight, optimizer_state_name(weight, "adam_m"), optimizer_state_name(weight, "adam_v"),
              optimizer_state_name(weight, "adam_step")};
  }
  fail("unknown sparse optimizer {}", static_cast<int64_t>(kind));
}

std::vector<std::vector<int64_t>> optimizer_state_row_shapes(SparseOptimizer kind, int64_t dim) {
  switch (kind) {
    case SparseOptimizer::kAdagrad: return {{dim}};
    case SparseOptimizer::kRowAdagrad: return {{}};
    case SparseOptimizer::kAdam: return {{dim}, {dim}, {}};
  }
  fail("unknown sparse optimizer {}", static_cast<int64_t>(kind));
}

void apply_sparse_step(const std::function<LocalTensor&(const std::string&)>& lookup, const std::string& weight,
                       const SparseStepParams& params, const int64_t* rows, int64_t count, const float* grads,
                       RowLocks& locks) {
  std::vector<LocalTensor*> t;  // in sparse_step_tensors' order
  for (const std::string& name : sparse_step_tensors(params.kind, weight)) t.push_back(&lookup(name));
  const AdagradParams adagrad{static_cast<float>(params.lr), static_cast<float>(params.eps),
                              static_cast<float>(params.state_weight)};
  switch (params.kind) {
    case SparseOptimizer::kAdagrad:
      adagrad_rows(*t[0], *t[1], rows, count, grads, adagrad, locks);
      return;
    case SparseOptimizer::kRowAdagrad:
      row_adagrad_rows(*t[0], *t[1], rows, count, grads, adagrad, locks);
      return;
    case SparseOptimizer::kAdam: {
      AdamParams p{static_cast<float>(params.lr), static_cast<float>(params.beta1), static_cast<float>(params.beta2),
                   static_cast<float>(params.eps)};
      adam_rows(*t[0], *t[1], *t[2], *t[3], rows, count, grads, p, locks);
      return;
    }
  }
}

}  // namespace tessera::store
