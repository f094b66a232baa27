// Conversions between Tessera's values and torch tensors, without copies where the memory can be shared: an
// Array's buffer becomes a tensor that keeps the Array alive, a std::vector is moved into the tensor's owner,
// and a contiguous tensor is read in place. Arguments from Python are checked here, so that a wrong dtype or
// shape raises TypeError / ValueError naming the argument instead of reaching a kernel.
#pragma once

#include <torch/extension.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/base/array.h"
#include "tessera/nn/csr_reduce.h"

namespace tessera::python {

torch::ScalarType scalar_type(DType dtype);
std::string shape_string(const torch::Tensor& t);  // "(2708, 1433)", as Python prints shapes
DType dtype_of_tensor(const torch::Tensor& t, const std::string& what);

// A tensor viewing the Array's memory; the tensor keeps the Array alive.
torch::Tensor to_tensor(const Array& array);
// A 1-d int64 tensor that takes over the vector's buffer.
torch::Tensor to_tensor(std::vector<int64_t>&& values);
torch::Tensor to_tensor(std::vector<int32_t>&& values);

// An Array viewing a contiguous CPU tensor's memory (which the Array keeps alive).
Array to_array(const torch::Tensor& t, const std::string& what);

// IDs from Python: a 1-d integer CPU tensor, returned as contiguous int64
// (converted if it is another integer type). TypeError otherwise.
torch::Tensor id_tensor(const torch::Tensor& ids, const std::string& what);

// The same, each ID in [0, bound), or IndexError naming the argument.
torch::Tensor checked_ids(const torch::Tensor& ids, int64_t bound, const std::string& what);

// A reduction named from Python ("sum", "mean" or "gcn"); ValueError naming `op` otherwise.
nn::CsrReduce parse_reduce(const char* op, const std::string& reduce);

// A Python exception type for a message, raised by the caller.
struct TypeError : std::exception {
  explicit TypeError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};
struct ValueError : std::exception {
  explicit ValueError(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

}  // namespace tessera::python
