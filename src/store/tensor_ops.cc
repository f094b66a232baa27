#include "store/tensor_ops.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

#include "tessera/base/error.h"
#include "base/adam_update.h"
#include "base/prefetch.h"

namespace tessera::store {
namespace {

// Below this many bytes a batch is gathered by one thread: waking the
// OpenMP team costs more than copying.
constexpr size_t kParallelBytes = 1 << 20;

template <typename T>
void add_typed(LocalTensor& tensor, const int64_t* rows, int64_t count, const void* values, RowLocks& locks) {
  const int64_t width = tensor.spec.row_elems();
  T* data = tensor.rows.data<T>();
  const T* in = static_cast<const T*>(values);
  for (int64_t i = 0; i < count; ++i) {
    RowGuard guard(locks, RowLocks::stripe(tensor.lock_key, rows[i]));
    T* row = data + rows[i] * width;
    const T* v = in + i * width;
    for (int64_t k = 0; k < width; ++k) row[k] += v[k];
  }
}

void check_writable(const LocalTensor& tensor) {
  if (!tensor.writable)
    fail("tensor {} is read-only (it was loaded from the partition files); create a DistTensor for values you update",
         tensor.spec.name);
}

void check_float_rows(const LocalTensor& t, int64_t width, const char* role) {
  if (t.rows.dtype() != DType::kFloat32 || t.spec.row_elems() != width)
    fail("tensor {} cannot serve as {}: expected float32 rows of {} values", t.spec.name, role, width);
}

}  // namespace

void check_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count) {
  const int64_t n = tensor.num_rows();
  for (int64_t i = 0; i < count; ++i)
    if (rows[i] < 0 || rows[i] >= n)
      fail("tensor {}: row {} is out of range (this partition holds {} rows)", tensor.spec.name, rows[i], n);
}

// An optimizer state tensor and the row width it must have.
struct StateOf {
  const LocalTensor& tensor;
  int64_t width;
  const char* role;
};

// Everything a sparse optimizer step checks before its first write: the
// weight is writable float rows, each state has its width, every row exists.
void check_step(const LocalTensor& weight, std::initializer_list<StateOf> states, const int64_t* rows,
                int64_t count) {
  check_writable(weight);
  check_float_rows(weight, weight.spec.row_elems(), "a weight");
  check_rows(weight, rows, count);
  for (const StateOf& s : states) {
    check_float_rows(s.tensor, s.width, s.role);
    check_rows(s.tensor, rows, count);
  }
}

void gather_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count, RowLocks& locks, void* out) {
  check_rows(tensor, rows, count);
  const size_t row_bytes = tensor.rows.row_bytes();
  const char* src = static_cast<const char*>(tensor.rows.raw());
  char* dst = static_cast<char*>(out);
  RowLocks* held = read_locks(tensor, locks);
  if (held != nullptr) {
    // One thread: a lock that is never released throws, and no exception may leave an OpenMP region.
    for (int64_t i = 0; i < count; ++i) copy_row(tensor, rows[i], row_bytes, held, dst + i * row_bytes);
    return;
  }
  const bool parallel = row_bytes * static_cast<size_t>(count) >= kParallelBytes;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchRows < count) prefetch_row_kept(src + rows[i + kPrefetchRows] * row_bytes, row_bytes);
    std::memcpy(dst + i * row_bytes, src + rows[i] * row_bytes, row_bytes);
  }
}

Array gather_rows(const LocalTensor& tensor, const int64_t* rows, int64_t count, RowLocks& locks) {
  std::vector<int64_t> shape = tensor.rows.shape();
  shape[0] = count;
  Array out = Array::uninitialized(tensor.rows.dtype(), shape);
  gather_rows(tensor, rows, count, locks, out.mutable_raw());
  return out;
}

void assign_rows(LocalTensor& tensor, const int64_t* rows, int64_t count, const void* values, RowLocks& locks) {
  check_writable(tensor);
  check_rows(tensor, rows, count);
  const size_t row_bytes = tensor.rows.row_bytes();
  char* dst = static_cast<char*>(tensor.rows.mutable_raw());
  const char* src = static_cast<const char*>(values);
  for (int64_t i = 0; i < count; ++i) {
    RowGuard guard(locks, RowLocks::stripe(tensor.lock_key, rows[i]));
    std::memcpy(dst + rows[i] * row_bytes, src + i * row_bytes, row_bytes);
  }
}

void add_rows(LocalTensor& tensor, const int64_t* rows, int64_t count, const void* values, RowLocks& locks) {
  check_writable(tensor);
  check_rows(tensor, rows, count);
  switch (tensor.rows.dtype()) {
    case DType::kFloat32: add_typed<float>(tensor, rows, count, values, locks); break;
    case DType::kFloat64: add_typed<double>(tensor, rows, count, values, locks); break;
    case DType::kInt64: add_typed<int64_t>(tensor, rows, count, values, locks); break;
    case DType::kInt32: add_typed<int32_t>(tensor, rows, count, values, locks); break;
    default: fail("tensor {}: cannot add {} rows", tensor.spec.name, dtype_name(tensor.rows.dtype()));
  }
}

void adagrad_rows(LocalTensor& weight, LocalTensor& state_sum, const int64_t* rows, int64_t count,
                  const float* grads, const AdagradParams& p, RowLocks& locks) {
  const int64_t width = weight.spec.row_elems();
  check_step(weight, {{state_sum, width, "Adagrad state"}}, rows, count);
  float* w = weight.rows.data<float>();
  float* s = state_sum.rows.data<float>();
  for (int64_t i = 0; i < count; ++i) {
    RowGuard guard(locks, RowLocks::stripe(weight.lock_key, rows[i]));
    float* wr = w + rows[i] * width;
    float* sr = s + rows[i] * width;
    const float* g = grads + i * width;
    for (int64_t k = 0; k < width; ++k) {
      sr[k] += p.state_weight * g[k] * g[k];
      wr[k] -= p.lr * g[k] / (std::sqrt(sr[k]) + p.eps);
    }
  }
}

void row_adagrad_rows(LocalTensor& weight, LocalTensor& state_sum, const int64_t* rows, int64_t count,
                      const float* grads, const AdagradParams& p, RowLocks& locks) {
  const int64_t width = weight.spec.row_elems();
  check_step(weight, {{state_sum, 1, "row-wise Adagrad state"}}, rows, count);
  float* w = weight.rows.data<float>();
  float* s = state_sum.rows.data<float>();
  for (int64_t i = 0; i < count; ++i) {
    RowGuard guard(locks, RowLocks::stripe(weight.lock_key, rows[i]));
    float* wr = w + rows[i] * width;
    const float* g = grads + i * width;
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t k = 0; k < width; ++k) squares += g[k] * g[k];
    const float state = s[rows[i]] += p.state_weight * squares / static_cast<float>(width);
    const float scale = p.lr / (std::sqrt(state) + p.eps);
    // simd: the weights and gradients never overlap, which -O2 would not
    // vectorise on without a runtime check.
#pragma omp simd
    for (int64_t k = 0; k < width; ++k) wr[k] -= scale * g[k];
  }
}

void adam_rows(LocalTensor& weight, LocalTensor& exp_avg, LocalTensor& exp_avg_sq, LocalTensor& steps,
               const int64_t* rows, int64_t count, const float* grads, const AdamParams& p, RowLocks& locks) {
  const int64_t width = weight.spec.row_elems();
  check_step(weight, {{exp_avg, width, "Adam state"}, {exp_avg_sq, width, "Adam state"}, {steps, 1, "Adam step count"}},
             rows, count);
  float* w = weight.rows.data<float>();
  float* m = exp_avg.rows.data<float>();
  float* v = exp_avg_sq.rows.data<float>();
  float* step = steps.rows.data<float>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = rows[i];
    RowGuard guard(locks, RowLocks::stripe(weight.lock_key, r));
    const float t = step[r] += 1.0f;
    const double bias1 = 1.0 - std::pow(static_cast<double>(p.beta1), t);
    const double bias2 = 1.0 - std::pow(static_cast<double>(p.beta2), t);
    const AdamStep s{p.beta1, 1 - p.beta1, p.beta2, 1 - p.beta2, p.eps, static_cast<float>(p.lr / bias1),
                     static_cast<float>(std::sqrt(bias2))};
    adam_update(width, w + r * width, grads + i * width, m + r * width, v + r * width, s);
  }
}

}  // namespace tessera::store
