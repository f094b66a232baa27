#include "convert.h"

#include <fmt/format.h>

#include <memory>

namespace tessera::python {

std::string shape_string(const torch::Tensor& t) {
  std::string out = "(";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + (t.dim() == 1 ? ",)" : ")");
}

torch::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kInt32: return torch::kInt32;
    case DType::kInt64: return torch::kInt64;
    case DType::kFloat32: return torch::kFloat32;
    case DType::kFloat64: return torch::kFloat64;
    case DType::kUInt8: return torch::kUInt8;
    case DType::kBool: return torch::kBool;
  }
  throw TypeError("internal: unknown dtype");
}

DType dtype_of_tensor(const torch::Tensor& t, const std::string& what) {
  switch (t.scalar_type()) {
    case torch::kInt32: return DType::kInt32;
    case torch::kInt64: return DType::kInt64;
    case torch::kFloat32: return DType::kFloat32;
    case torch::kFloat64: return DType::kFloat64;
    case torch::kUInt8: return DType::kUInt8;
    case torch::kBool: return DType::kBool;
    default:
      throw TypeError(fmt::format("{}: Tessera stores int32, int64, float32, float64, uint8 and bool, not {}", what,
                                  std::string(c10::toString(t.scalar_type()))));
  }
}

torch::Tensor to_tensor(const Array& array) {
  if (array.empty_handle()) return torch::empty({0});
  auto keep = std::make_shared<Array>(array);
  return torch::from_blob(keep->mutable_raw(), array.shape(), [keep](void*) mutable { keep.reset(); },
                          torch::TensorOptions().dtype(scalar_type(array.dtype())));
}

template <typename T>
static torch::Tensor vector_tensor(std::vector<T>&& values, torch::ScalarType type) {
  auto keep = new std::vector<T>(std::move(values));
  const int64_t n = static_cast<int64_t>(keep->size());
  return torch::from_blob(keep->data(), {n}, [keep](void*) { delete keep; }, torch::TensorOptions().dtype(type));
}

torch::Tensor to_tensor(std::vector<int64_t>&& values) { return vector_tensor(std::move(values), torch::kInt64); }
torch::Tensor to_tensor(std::vector<int32_t>&& values) { return vector_tensor(std::move(values), torch::kInt32); }

Array to_array(const torch::Tensor& t, const std::string& what) {
  if (!t.device().is_cpu()) throw ValueError(fmt::format("{}: Tessera's tensors live on the CPU; call .cpu() first", what));
  const DType dtype = dtype_of_tensor(t, what);
  auto keep = std::make_shared<torch::Tensor>(t.contiguous());
  std::vector<int64_t> shape(keep->sizes().begin(), keep->sizes().end());
  return Array::wrap(dtype, shape, keep->data_ptr(), std::shared_ptr<const void>(keep, keep->data_ptr()));
}

torch::Tensor id_tensor(const torch::Tensor& ids, const std::string& what) {
  if (!ids.device().is_cpu()) throw ValueError(fmt::format("{}: IDs must be on the CPU", what));
  if (ids.dim() != 1) throw ValueError(fmt::format("{}: IDs must be 1-d, not of shape {}", what, shape_string(ids)));
  switch (ids.scalar_type()) {
    case torch::kInt64: return ids.contiguous();
    case torch::kInt32: case torch::kInt16: case torch::kInt8: case torch::kUInt8: return ids.to(torch::kInt64);
    default:
      throw TypeError(fmt::format("{}: IDs must be integers, not {}", what, std::string(c10::toString(ids.scalar_type()))));
  }
}

torch::Tensor checked_ids(const torch::Tensor& ids, int64_t bound, const std::string& what) {
  torch::Tensor t = id_tensor(ids, what);
  const int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (p[i] < 0 || p[i] >= bound)
      throw py::index_error(fmt::format("{}: ID {} (position {}) is outside 0..{}", what, p[i], i, bound - 1));
  return t;
}

nn::CsrReduce parse_reduce(const char* op, const std::string& reduce) {
  if (reduce == "sum") return nn::CsrReduce::kSum;
  if (reduce == "mean") return nn::CsrReduce::kMean;
  if (reduce == "gcn") return nn::CsrReduce::kGcnMean;
  throw ValueError(std::string(op) + ": reduce must be sum, mean or gcn, not " + reduce);
}

}  // namespace tessera::python
