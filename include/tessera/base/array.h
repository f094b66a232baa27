// Array: a typed, row-major n-d buffer. Its memory is either owned (heap, freed when the last copy goes) or
// memory wrapped with an owner that keeps it alive, such as a read-only mapping of a .npy file; copies of an
// Array, and the views sub() and slice_rows() return, share that memory, so passing one around never copies data.
// gather_rows(), zeros() and uninitialized() return new owned arrays. A pointer from data() or raw() is valid
// while some Array sharing the memory lives; writing through one into a file mapping is undefined.
//
// Threading: an Array is a plain value with no locks. Several threads may read one (and its copies) at once;
// writes to shared memory must be coordinated by the caller.
//
// Errors: tessera::Error on an out-of-memory allocation, data<T>() of the wrong dtype, an index or row range
// outside the shape, and dtype_from_name() of an unknown name; messages name the shape or dtype involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

enum class DType : uint8_t { kInt32, kInt64, kFloat32, kFloat64, kUInt8, kBool };

size_t dtype_size(DType dtype);
std::string dtype_name(DType dtype);  // "int64", "float32", ...
DType dtype_from_name(const std::string& name);

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

class Array {
 public:
  Array() = default;
  // A zero-filled owned array.
  static Array zeros(DType dtype, std::vector<int64_t> shape);
  // Contents undefined: for buffers the caller fills completely.
  static Array uninitialized(DType dtype, std::vector<int64_t> shape);
  template <typename T>
  static Array from_vector(const std::vector<T>& values) {
    Array a = zeros(dtype_of<T>(), {static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), a.data<T>());
    return a;
  }
  // Wraps memory kept alive by `owner` (for example a file mapping).
  static Array wrap(DType dtype, std::vector<int64_t> shape, const void* data,
                    std::shared_ptr<const void> owner);

  bool empty_handle() const { return owner_ == nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t ndim() const { return shape_.size(); }
  int64_t numel() const;
  int64_t rows() const { return shape_.empty() ? 1 : shape_[0]; }
  // Bytes of one row (product of trailing dimensions times the element size).
  size_t row_bytes() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  std::string shape_string() const;  // "(2708, 1433)"

  const void* raw() const { return data_; }
  void* mutable_raw() { return const_cast<void*>(data_); }
  template <typename T> const T* data() const { check_type(dtype_of<T>()); return static_cast<const T*>(data_); }
  template <typename T> T* data() { check_type(dtype_of<T>()); return static_cast<T*>(const_cast<void*>(data_)); }

  // View of a[index] (drops the first dimension), sharing this array's memory:
  // row 0 of a [2, E] edge array is the E sources.
  Array sub(int64_t index) const;

  // Rows [begin, end) as a view sharing this array's memory.
  Array slice_rows(int64_t begin, int64_t end) const;

  // Rows `ids` gathered into a new owned array.
  Array gather_rows(const int64_t* ids, int64_t count) const;

 private:
  void check_type(DType expected) const;
  static Array allocate(DType dtype, std::vector<int64_t> shape, bool zero);

  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  const void* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

}  // namespace tessera
