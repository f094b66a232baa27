#include "embedding_table.h"

#include "tessera/distributed/dist_tensor.h"
#include "tessera/partition/partition_book.h"
#include "tessera/store/sparse_step.h"
#include "base/prefetch.h"
#include "store/tensor_ops.h"
#include "tessera/base/error.h"

namespace tessera::kge {

torch::Tensor tensor_of(const Array& array) {
  if (array.dtype() != DType::kFloat32) fail("expected a float32 array, found {}", dtype_name(array.dtype()));
  auto keep = std::make_shared<Array>(array);
  return torch::from_blob(const_cast<void*>(array.raw()), array.shape(), [keep](void*) {}, torch::kFloat32);
}

Array array_of(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.to(torch::kFloat32).contiguous();
  Array a = Array::uninitialized(DType::kFloat32, t.sizes().vec());
  std::memcpy(a.mutable_raw(), t.data_ptr<float>(), a.nbytes());
  return a;
}

store::Initializer uniform_init(double range, uint64_t seed) { return {"uniform", -range, range, seed}; }

store::SparseOptimizer kge_optimizer(const std::string& name) {
  if (name == "row_adagrad") return store::SparseOptimizer::kRowAdagrad;
  if (name == "adagrad") return store::SparseOptimizer::kAdagrad;
  if (name == "adam") return store::SparseOptimizer::kAdam;
  fail("--optimizer must be row_adagrad (DGL-KE's), adagrad (element-wise, LibKGE's) or adam, got '{}'", name);
}

double optimizer_eps(store::SparseOptimizer kind) { return kind == store::SparseOptimizer::kAdam ? 1e-8 : 1e-10; }

namespace {

store::TensorSpec spec_of(const std::string& name, std::vector<int64_t> row_shape, const store::Initializer& init) {
  store::TensorSpec spec;
  spec.name = name;
  spec.row_shape = std::move(row_shape);
  spec.init = init;
  return spec;
}

// Rows `rows` of float tensor `t` into `out` (count x row width), each under
// the stripe lock that row's optimizer steps hold: writers update rows in
// place meanwhile, and an unlocked read would race them (TSan's report on
// `kge train --num_proc 2`) and could see half an update.
void copy_rows_locked(const store::LocalTensor& t, const int64_t* rows, int64_t count, store::RowLocks& locks,
                      float* out) {
  const int64_t width = t.spec.row_elems();
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(width);
  const float* base = t.rows.data<float>();
  for (int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchRows < count) prefetch_row_kept(base + rows[i + kPrefetchRows] * width, row_bytes);
    store::copy_row(t, rows[i], row_bytes, &locks, out + i * width);
  }
}

std::string optimizer_label(store::SparseOptimizer kind) {
  switch (kind) {
    case store::SparseOptimizer::kRowAdagrad: return "row-wise Adagrad";
    case store::SparseOptimizer::kAdagrad: return "--optimizer adagrad";
    case store::SparseOptimizer::kAdam: return "--optimizer adam";
  }
  return "?";
}

float* sized(std::vector<float>& buffer, size_t count) {
  if (buffer.size() < count) buffer.resize(count);
  return buffer.data();
}

}  // namespace

void EmbeddingTable::pull_rows(const std::vector<int64_t>& ids, PulledRows* out) {
  out->storage = pull(ids).contiguous();
  const float* base = out->storage.data_ptr<float>();
  out->rows.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out->rows[i] = base + i * dim();
}

LocalTable::LocalTable(const std::string& name, int64_t rows, int64_t dim, const store::Initializer& init, double lr,
                       store::SparseOptimizer optimizer)
    : dim_(dim),
      optimizer_(optimizer),
      weight_(store::create_heap_tensor(spec_of(name, {dim}, init), 0, rows)),
      lock_memory_(store::RowLocks::kStripes, 0),
      locks_(lock_memory_.data()) {
  if (dim < 1) fail("embedding {}: dimension must be at least 1, got {}", name, dim);
  const std::vector<std::string> tensors = store::sparse_step_tensors(optimizer, name);
  const std::vector<std::vector<int64_t>> shapes = store::optimizer_state_row_shapes(optimizer, dim);
  for (size_t i = 0; i < shapes.size(); ++i)
    state_.push_back(store::create_heap_tensor(spec_of(tensors[i + 1], shapes[i], {}), 0, rows));
  lr_ = lr;
}

torch::Tensor LocalTable::view() {
  return torch::from_blob(weight_.rows.mutable_raw(), {num_rows(), dim_}, torch::kFloat32);
}

torch::Tensor LocalTable::pull(const std::vector<int64_t>& ids) {
  const int64_t n = static_cast<int64_t>(ids.size());
  store::check_rows(weight_, ids.data(), n);
  torch::Tensor rows = torch::empty({n, dim_}, torch::kFloat32);
  copy_rows_locked(weight_, ids.data(), n, locks_, rows.data_ptr<float>());
  return rows;
}

void LocalTable::pull_rows(const std::vector<int64_t>& ids, PulledRows* out) {
  const int64_t n = static_cast<int64_t>(ids.size());
  float* copies = sized(out->copies, static_cast<size_t>(n * dim_));
  copy_rows_locked(weight_, ids.data(), n, locks_, copies);
  out->storage = torch::Tensor();
  out->rows.resize(ids.size());
  for (int64_t i = 0; i < n; ++i) out->rows[i] = copies + i * dim_;
}

void LocalTable::push(const std::vector<int64_t>& ids, const torch::Tensor& grad) {
  const torch::Tensor g = grad.contiguous();
  store::SparseStepParams params;
  params.kind = optimizer_;
  params.lr = lr_;
  params.eps = optimizer_eps(optimizer_);
  params.state_weight = state_weight_;
  // The table's tensors by name: the weight, then its state in sparse_step_tensors' order.
  auto lookup = [this](const std::string& name) -> store::LocalTensor& {
    if (name == weight_.spec.name) return weight_;
    for (store::LocalTensor& t : state_)
      if (t.spec.name == name) return t;
    fail("embedding {}: no tensor {}", weight_.spec.name, name);
  };
  store::apply_sparse_step(lookup, weight_.spec.name, params, ids.data(), static_cast<int64_t>(ids.size()),
                           g.data_ptr<float>(), locks_);
}

std::vector<torch::Tensor> LocalTable::state_views() {
  std::vector<torch::Tensor> views;
  for (store::LocalTensor& t : state_)
    views.push_back(torch::from_blob(t.rows.mutable_raw(), {num_rows(), t.spec.row_elems()}, torch::kFloat32));
  return views;
}

torch::Tensor LocalTable::read_state() {
  std::vector<torch::Tensor> flat;
  for (const torch::Tensor& v : state_views()) flat.push_back(v.reshape({-1}));
  return torch::cat(flat);
}

void LocalTable::write_all(const torch::Tensor& weights, const torch::Tensor& state) {
  std::vector<torch::Tensor> views = state_views();
  int64_t state_size = 0;
  for (const torch::Tensor& v : views) state_size += v.numel();
  if (weights.sizes() != view().sizes() || state.numel() != state_size)
    fail("embedding {}: a checkpoint of shape {} with {} optimizer state values does not fit a table of {} x {} ({} "
         "values: {})",
         weight_.spec.name, fmt::format("{}", fmt::join(weights.sizes().vec(), "x")), state.numel(), num_rows(), dim_,
         state_size, optimizer_label(optimizer_));
  view().copy_(weights);
  const torch::Tensor flat = state.reshape({-1});
  int64_t at = 0;
  for (torch::Tensor& v : views) {
    v.copy_(flat.narrow(0, at, v.numel()).reshape(v.sizes()));
    at += v.numel();
  }
}

ServerTable::ServerTable(distributed::Context& ctx, const std::string& name, int64_t dim, const std::string& policy,
                         const store::Initializer& init, double lr, store::SparseOptimizer optimizer)
    : ctx_(&ctx), kind_(optimizer), embedding_(ctx, name, dim, policy, init) {
  const std::vector<const distributed::DistEmbedding*> tables{&embedding_};
  switch (optimizer) {
    case store::SparseOptimizer::kAdagrad:
      optimizer_ = std::make_unique<distributed::SparseAdagrad>(ctx, tables, lr);
      break;
    case store::SparseOptimizer::kRowAdagrad:
      optimizer_ = std::make_unique<distributed::SparseRowAdagrad>(ctx, tables, lr);
      break;
    case store::SparseOptimizer::kAdam:
      optimizer_ = std::make_unique<distributed::SparseAdam>(ctx, tables, lr);
      break;
  }
  lr_ = lr;
}

std::vector<distributed::DistTensor> ServerTable::state_tensors() const {
  std::vector<distributed::DistTensor> tensors;
  const std::vector<std::string> names = store::sparse_step_tensors(kind_, embedding_.weight().name());
  for (size_t i = 1; i < names.size(); ++i) tensors.push_back(distributed::DistTensor::open(*ctx_, names[i]));
  return tensors;
}

torch::Tensor ServerTable::pull(const std::vector<int64_t>& ids) {
  return tensor_of(embedding_.lookup(ids.data(), static_cast<int64_t>(ids.size())));
}

void ServerTable::pull_rows(const std::vector<int64_t>& ids, PulledRows* out) {
  // The local half is copied straight from shared memory into a reused
  // buffer: copying it into a fresh tensor through the pull path cost a
  // 2-machine TransE_l2 step as much as fetching the remote half.
  const int part = ctx_->local_part();
  const store::LocalTensor* local =
      part >= 0 && ctx_->writes_in_place(part) ? ctx_->local_tensor(embedding_.weight().name()) : nullptr;
  if (local == nullptr) return EmbeddingTable::pull_rows(ids, out);
  const IdSpace& space = ctx_->book().space(embedding_.weight().spec().policy);
  const int64_t first = space.starts[part];
  const uint64_t local_rows = static_cast<uint64_t>(space.starts[part + 1] - first);
  if (local->num_rows() != static_cast<int64_t>(local_rows) || local->rows.row_bytes() != sizeof(float) * dim())
    fail("embedding {}: the local partition's rows do not match the partition book", embedding_.name());
  std::vector<int64_t> local_offsets, local_at, remote, remote_at;
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t offset = static_cast<uint64_t>(ids[i] - first);  // negative IDs wrap past local_rows
    if (offset < local_rows) {
      local_offsets.push_back(static_cast<int64_t>(offset));
      local_at.push_back(static_cast<int64_t>(i));
    } else {
      remote.push_back(ids[i]);
      remote_at.push_back(static_cast<int64_t>(i));
    }
  }
  const int64_t local_count = static_cast<int64_t>(local_at.size());
  float* copies = sized(out->copies, static_cast<size_t>(local_count * dim()));
  copy_rows_locked(*local, local_offsets.data(), local_count, ctx_->local_locks(), copies);
  out->rows.resize(ids.size());
  for (int64_t k = 0; k < local_count; ++k) out->rows[local_at[k]] = copies + k * dim();
  out->storage = remote.empty() ? torch::Tensor() : pull(remote).contiguous();
  for (size_t k = 0; k < remote.size(); ++k) out->rows[remote_at[k]] = out->storage.data_ptr<float>() + k * dim();
}

void ServerTable::push(const std::vector<int64_t>& ids, const torch::Tensor& grad) {
  const torch::Tensor g = grad.contiguous();
  optimizer_->flush();
  optimizer_->set_lr(lr_);
  optimizer_->step_async(embedding_, ids.data(), static_cast<int64_t>(ids.size()), g.data_ptr<float>());
}

void ServerTable::flush() {
  optimizer_->flush();
  if (candidates_) candidates_->flush();
}

ShardedCandidates& ServerTable::candidates() {
  if (!candidates_)
    candidates_ = std::make_unique<ShardedCandidates>(*ctx_, embedding_.weight().name(),
                                                      embedding_.weight().spec().policy, dim(), optimizer_kind());
  return *candidates_;
}

torch::Tensor ServerTable::read_all() {
  return tensor_of(distributed::read_in_original_order(*ctx_, embedding_.weight()));
}

torch::Tensor ServerTable::read_state() {
  std::vector<torch::Tensor> flat;
  for (const distributed::DistTensor& t : state_tensors())
    flat.push_back(tensor_of(distributed::read_in_original_order(*ctx_, t)).reshape({-1}));
  return torch::cat(flat);
}

void ServerTable::write_all(const torch::Tensor& weights, const torch::Tensor& state) {
  distributed::write_in_original_order(*ctx_, embedding_.weight(), array_of(weights));
  const torch::Tensor flat = state.reshape({-1});
  const std::vector<distributed::DistTensor> tensors = state_tensors();
  int64_t size = 0;
  for (const distributed::DistTensor& t : tensors) size += num_rows() * t.spec().row_elems();
  if (flat.numel() != size)
    fail("embedding {}: a checkpoint with {} optimizer state values does not fit {} rows ({} values: {})",
         embedding_.name(), flat.numel(), num_rows(), size, optimizer_label(kind_));
  int64_t at = 0;
  for (const distributed::DistTensor& t : tensors) {
    const int64_t width = t.spec().row_elems();
    const torch::Tensor part = flat.narrow(0, at, num_rows() * width);
    distributed::write_in_original_order(*ctx_, t,
                                         array_of(t.spec().row_shape.empty() ? part : part.reshape({num_rows(), width})));
    at += num_rows() * width;
  }
}

}  // namespace tessera::kge
