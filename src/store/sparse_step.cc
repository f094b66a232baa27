#include "tessera/store/sparse_step.h"

#include "store/tensor_ops.h"
#include "tessera/base/error.h"

namespace tessera::store {

std::string optimizer_state_name(const std::string& weight, const char* state) { return weight + "." + state; }

void apply_sparse_step(const std::function<LocalTensor&(const std::string&)>& lookup, const std::string& weight,
                       const SparseStepParams& params, const int64_t* rows, int64_t count, const float* grads,
                       RowLocks& locks) {
  LocalTensor& w = lookup(weight);
  switch (params.kind) {
    case SparseOptimizer::kAdagrad: {
      AdagradParams p{static_cast<float>(params.lr), static_cast<float>(params.eps)};
      adagrad_rows(w, lookup(optimizer_state_name(weight, "adagrad_sum")), rows, count, grads, p, locks);
      return;
    }
    case SparseOptimizer::kRowAdagrad: {
      AdagradParams p{static_cast<float>(params.lr), static_cast<float>(params.eps)};
      row_adagrad_rows(w, lookup(optimizer_state_name(weight, "row_adagrad_sum")), rows, count, grads, p, locks);
      return;
    }
    case SparseOptimizer::kAdam: {
      AdamParams p{static_cast<float>(params.lr), static_cast<float>(params.beta1), static_cast<float>(params.beta2),
                   static_cast<float>(params.eps)};
      adam_rows(w, lookup(optimizer_state_name(weight, "adam_m")), lookup(optimizer_state_name(weight, "adam_v")),
                lookup(optimizer_state_name(weight, "adam_step")), rows, count, grads, p, locks);
      return;
    }
  }
  fail("unknown sparse optimizer {}", static_cast<int64_t>(params.kind));
}

}  // namespace tessera::store
