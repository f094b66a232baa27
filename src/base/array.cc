#include "tessera/base/array.h"

#include <cstring>

#include "tessera/base/error.h"

namespace tessera {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kUInt8: return 1;
    case DType::kBool: return 1;
  }
  return 0;
}

std::string dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "?";
}

DType dtype_from_name(const std::string& name) {
  for (DType d : {DType::kInt32, DType::kInt64, DType::kFloat32, DType::kFloat64, DType::kUInt8,
                  DType::kBool}) {
    if (dtype_name(d) == name) return d;
  }
  fail("unknown dtype '{}' (expected int32, int64, float32, float64, uint8 or bool)", name);
}

Array Array::zeros(DType dtype, std::vector<int64_t> shape) { return allocate(dtype, std::move(shape), true); }

Array Array::uninitialized(DType dtype, std::vector<int64_t> shape) { return allocate(dtype, std::move(shape), false); }

Array Array::allocate(DType dtype, std::vector<int64_t> shape, bool zero) {
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  size_t bytes = a.nbytes();
  // calloc lets the kernel hand out zero pages lazily: big arrays cost nothing
  // until written. Buffers about to be overwritten skip the zeroing.
  void* buffer = zero ? std::calloc(bytes > 0 ? bytes : 1, 1) : std::malloc(bytes > 0 ? bytes : 1);
  if (!buffer) fail("out of memory allocating {} bytes for a {} array", bytes, a.shape_string());
  a.owner_ = std::shared_ptr<const void>(buffer, [](const void* p) { std::free(const_cast<void*>(p)); });
  a.data_ = buffer;
  return a;
}

Array Array::wrap(DType dtype, std::vector<int64_t> shape, const void* data,
                  std::shared_ptr<const void> owner) {
  Array a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.data_ = data;
  a.owner_ = std::move(owner);
  return a;
}

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

size_t Array::row_bytes() const {
  size_t n = dtype_size(dtype_);
  for (size_t i = 1; i < shape_.size(); ++i) n *= static_cast<size_t>(shape_[i]);
  return n;
}

std::string Array::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape_[i]);
  }
  if (shape_.size() == 1) s += ",";
  return s + ")";
}

Array Array::sub(int64_t index) const {
  if (shape_.empty() || index < 0 || index >= shape_[0]) fail("index {} out of range for shape {}", index, shape_string());
  std::vector<int64_t> shape(shape_.begin() + 1, shape_.end());
  return wrap(dtype_, shape, static_cast<const char*>(data_) + index * row_bytes(), owner_);
}

Array Array::slice_rows(int64_t begin, int64_t end) const {
  if (shape_.empty() || begin < 0 || begin > end || end > shape_[0])
    fail("rows [{}, {}) out of range for shape {}", begin, end, shape_string());
  std::vector<int64_t> shape = shape_;
  shape[0] = end - begin;
  return wrap(dtype_, shape, static_cast<const char*>(data_) + begin * row_bytes(), owner_);
}

Array Array::gather_rows(const int64_t* ids, int64_t count) const {
  std::vector<int64_t> shape = shape_;
  if (shape.empty()) fail("cannot gather rows of a 0-d array");
  shape[0] = count;
  Array out = zeros(dtype_, shape);
  const size_t rb = row_bytes();
  const auto* src = static_cast<const char*>(data_);
  auto* dst = static_cast<char*>(out.mutable_raw());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * rb, src + ids[i] * rb, rb);
  }
  return out;
}

void Array::check_type(DType expected) const {
  if (expected != dtype_) fail("array of dtype {} accessed as {}", dtype_name(dtype_), dtype_name(expected));
}

}  // namespace tessera
