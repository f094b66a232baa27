#include "tessera/distributed/dist_embedding.h"

#include <algorithm>
#include <numeric>

#include "distributed/id_chunks.h"
#include "distributed/kv_client.h"
#include "tessera/io/npy.h"
#include "tessera/store/partition_store.h"
#include "tessera/base/error.h"

namespace tessera::distributed {
namespace {

// "node:paper" -> "node/paper/_ORIG_ID".
std::string orig_id_tensor(const std::string& policy) {
  const size_t colon = policy.find(':');
  return policy.substr(0, colon) + "/" + policy.substr(colon + 1) + "/" + store::kOrigIdName;
}

}  // namespace

DistEmbedding::DistEmbedding(Context& ctx, const std::string& name, int64_t dim, const std::string& policy,
                             store::Initializer init)
    : ctx_(&ctx), dim_(dim), weight_(ctx, name, DType::kFloat32, {dim}, policy, init, /*persistent=*/false) {
  if (dim <= 0) fail("embedding {}: dimension must be positive, got {}", name, dim);
}

Array read_in_original_order(Context& ctx, const DistTensor& tensor) {
  const int64_t n = tensor.num_rows();
  const DistTensor orig = DistTensor::open(ctx, orig_id_tensor(tensor.spec().policy));
  std::vector<int64_t> shape = tensor.shape();
  Array out = Array::zeros(tensor.spec().dtype, shape);
  const size_t row_bytes = out.row_bytes();
  auto* dst = static_cast<char*>(out.mutable_raw());
  for_each_id_chunk(0, n, [&](int64_t, const std::vector<int64_t>& ids) {
    const Array rows = tensor.pull(ids);
    const Array original = orig.pull(ids);
    const int64_t* o = original.data<int64_t>();
    const auto* src = static_cast<const char*>(rows.raw());
    for (size_t i = 0; i < ids.size(); ++i) {
      if (o[i] < 0 || o[i] >= n) fail("tensor {}: original ID {} out of range", tensor.name(), o[i]);
      std::copy_n(src + i * row_bytes, row_bytes, dst + o[i] * row_bytes);
    }
  });
  return out;
}

void write_in_original_order(Context& ctx, const DistTensor& tensor, const Array& table) {
  if (table.shape() != tensor.shape() || table.dtype() != tensor.spec().dtype)
    fail("tensor {}: expected {} rows of {} {}, found {} {}", tensor.name(), tensor.num_rows(),
         tensor.spec().row_elems(), dtype_name(tensor.spec().dtype), dtype_name(table.dtype()), table.shape_string());
  const DistTensor orig = DistTensor::open(ctx, orig_id_tensor(tensor.spec().policy));
  for_each_id_chunk(0, tensor.num_rows(), [&](int64_t, const std::vector<int64_t>& ids) {
    const Array original = orig.pull(ids);
    tensor.push(ids, table.gather_rows(original.data<int64_t>(), static_cast<int64_t>(ids.size())));
  });
}

void DistEmbedding::save(const std::string& path) const { write_npy(path, read_in_original_order(*ctx_, weight_)); }

void DistEmbedding::load(const std::string& path) const {
  const Array table = read_npy_checked(path, DType::kFloat32, 2, "embedding " + name());
  if (table.dim(0) != num_embeddings() || table.dim(1) != dim_)
    fail("{}: expected shape ({}, {}) for embedding {}, found {}", path, num_embeddings(), dim_, name(),
         table.shape_string());
  write_in_original_order(*ctx_, weight_, table);
}

void coalesce_gradients(const int64_t* ids, int64_t count, const float* grads, int64_t dim,
                        std::vector<int64_t>* unique_ids, std::vector<float>* summed) {
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ids[a] < ids[b]; });
  unique_ids->clear();
  summed->clear();
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = order[k];
    const float* g = grads + i * dim;
    if (unique_ids->empty() || unique_ids->back() != ids[i]) {
      unique_ids->push_back(ids[i]);
      summed->insert(summed->end(), g, g + dim);
    } else {
      float* row = summed->data() + (unique_ids->size() - 1) * dim;
      for (int64_t d = 0; d < dim; ++d) row[d] += g[d];
    }
  }
}

SparseOptimizer::SparseOptimizer(Context& ctx, const std::vector<const DistEmbedding*>& embeddings,
                                 store::SparseStepParams params)
    : ctx_(&ctx), params_(params) {
  for (const DistEmbedding* e : embeddings) {
    const std::string& policy = e->weight().spec().policy;
    tensors_.push_back(e->name());
    const std::vector<std::string> names = store::sparse_step_tensors(params.kind, e->name());
    const std::vector<std::vector<int64_t>> shapes = store::optimizer_state_row_shapes(params.kind, e->dim());
    for (size_t i = 0; i < shapes.size(); ++i) {
      state_.emplace_back(ctx, names[i + 1], DType::kFloat32, shapes[i], policy);
      tensors_.push_back(names[i + 1]);
    }
  }
}

void SparseOptimizer::step(const DistEmbedding& embedding, const int64_t* ids, int64_t count, const float* grads) {
  step_async(embedding, ids, count, grads);
  flush();
}

void SparseOptimizer::step_async(const DistEmbedding& embedding, const int64_t* ids, int64_t count,
                                 const float* grads) {
  std::vector<int64_t> unique_ids;
  std::vector<float> summed;
  coalesce_gradients(ids, count, grads, embedding.dim(), &unique_ids, &summed);
  const std::vector<uint64_t> sent =
      send_sparse_step(*ctx_, embedding.name(), embedding.weight().spec().policy, unique_ids.data(),
                       static_cast<int64_t>(unique_ids.size()), summed.data(), embedding.dim(), params_);
  in_flight_.insert(in_flight_.end(), sent.begin(), sent.end());
}

void SparseOptimizer::flush() {
  if (in_flight_.empty()) return;
  std::vector<uint64_t> requests;
  requests.swap(in_flight_);
  ctx_->client().wait(requests);
}

SparseAdagrad::SparseAdagrad(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr, double eps)
    : SparseOptimizer(ctx, embeddings, {store::SparseOptimizer::kAdagrad, lr, eps, 0, 0}) {}

SparseRowAdagrad::SparseRowAdagrad(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr,
                                   double eps)
    : SparseOptimizer(ctx, embeddings, {store::SparseOptimizer::kRowAdagrad, lr, eps, 0, 0}) {}

SparseAdam::SparseAdam(Context& ctx, const std::vector<const DistEmbedding*>& embeddings, double lr, double beta1,
                       double beta2, double eps)
    : SparseOptimizer(ctx, embeddings, {store::SparseOptimizer::kAdam, lr, eps, beta1, beta2}) {}

}  // namespace tessera::distributed
