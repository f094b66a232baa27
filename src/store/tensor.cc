#include "tessera/store/tensor.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::store {

int64_t TensorSpec::row_elems() const {
  int64_t n = 1;
  for (int64_t d : row_shape) n *= d;
  return n;
}

size_t TensorSpec::row_bytes() const { return static_cast<size_t>(row_elems()) * dtype_size(dtype); }

std::vector<int64_t> TensorSpec::shape(int64_t rows) const {
  std::vector<int64_t> s{rows};
  s.insert(s.end(), row_shape.begin(), row_shape.end());
  return s;
}

std::string TensorSpec::to_json() const {
  nlohmann::json j = {{"name", name},         {"dtype", dtype_name(dtype)}, {"row_shape", row_shape},
                      {"policy", policy},     {"persistent", persistent},   {"init", init.kind},
                      {"init_a", init.a},     {"init_b", init.b},           {"seed", init.seed}};
  return j.dump();
}

TensorSpec TensorSpec::from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    TensorSpec s;
    s.name = j.at("name").get<std::string>();
    s.dtype = dtype_from_name(j.at("dtype").get<std::string>());
    // Numbers are checked before get<>(), which would convert a float or an
    // out-of-range value without a word (1e300 is undefined behaviour).
    for (const nlohmann::json& d : j.at("row_shape"))
      if (!d.is_number_integer()) fail("bad tensor spec: row_shape holds {}, expected integers", d.dump());
    s.row_shape = j.at("row_shape").get<std::vector<int64_t>>();
    s.policy = j.at("policy").get<std::string>();
    s.persistent = j.at("persistent").get<bool>();
    s.init.kind = j.at("init").get<std::string>();
    s.init.a = j.at("init_a").get<double>();
    s.init.b = j.at("init_b").get<double>();
    if (!j.at("seed").is_number_unsigned()) fail("bad tensor spec: seed is {}, expected an integer >= 0", j.at("seed").dump());
    s.init.seed = j.at("seed").get<uint64_t>();
    for (int64_t d : s.row_shape)
      if (d < 0 || d > (int64_t{1} << 30)) fail("row dimension {} out of range", d);
    if (s.init.kind != "zeros" && s.init.kind != "uniform" && s.init.kind != "normal")
      fail("initializer '{}' is not zeros, uniform or normal", s.init.kind);
    return s;
  } catch (const nlohmann::json::exception& e) {
    fail("bad tensor spec: {}", e.what());
  }
}

void initialize_rows(LocalTensor& tensor) {
  const Initializer& init = tensor.spec.init;
  if (init.kind == "zeros") {
    std::memset(tensor.rows.mutable_raw(), 0, tensor.rows.nbytes());
    return;
  }
  const int64_t width = tensor.spec.row_elems();
  const int64_t n = tensor.num_rows();
  auto fill = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < n; ++r) {
      Rng rng(init.seed, static_cast<uint64_t>(tensor.first_id + r));
      T* row = data + r * width;
      for (int64_t k = 0; k < width; ++k)
        row[k] = static_cast<T>(init.kind == "uniform" ? init.a + (init.b - init.a) * rng.uniform()
                                                      : init.a + init.b * rng.normal());
    }
  };
  switch (tensor.rows.dtype()) {
    case DType::kFloat32: fill(tensor.rows.data<float>()); break;
    case DType::kFloat64: fill(tensor.rows.data<double>()); break;
    default: fail("tensor {}: random initializers need float32 or float64 rows", tensor.spec.name);
  }
}

}  // namespace tessera::store

namespace tessera::store {
namespace {

uint64_t name_key(const std::string& name) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: the same in every process
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

LocalTensor shared_view(const TensorSpec& spec, int64_t first_id, int64_t rows, SharedMemory shm) {
  LocalTensor t;
  t.spec = spec;
  t.first_id = first_id;
  t.writable = true;
  t.lock_key = name_key(spec.name);
  t.shm = std::make_shared<SharedMemory>(std::move(shm));
  t.rows = Array::wrap(spec.dtype, spec.shape(rows), t.shm->data(), t.shm);
  return t;
}

}  // namespace

LocalTensor create_shared_tensor(const TensorSpec& spec, int64_t first_id, int64_t rows, const std::string& segment) {
  const size_t bytes = static_cast<size_t>(rows) * spec.row_bytes();
  // A zero-byte segment cannot be mapped; keep one page so every tensor has an address.
  LocalTensor t = shared_view(spec, first_id, rows, SharedMemory::create(segment, std::max<size_t>(bytes, 1)));
  initialize_rows(t);
  return t;
}

LocalTensor attach_shared_tensor(const TensorSpec& spec, int64_t first_id, const std::string& segment) {
  SharedMemory shm = SharedMemory::attach(segment);
  const size_t row_bytes = spec.row_bytes();
  const int64_t rows = row_bytes == 0 ? 0 : static_cast<int64_t>(shm.size() / row_bytes);
  return shared_view(spec, first_id, rows, std::move(shm));
}

LocalTensor create_heap_tensor(const TensorSpec& spec, int64_t first_id, int64_t rows) {
  LocalTensor t;
  t.spec = spec;
  t.first_id = first_id;
  t.writable = true;
  t.lock_key = name_key(spec.name);
  t.rows = Array::zeros(spec.dtype, spec.shape(rows));
  initialize_rows(t);
  return t;
}

}  // namespace tessera::store
