#include "tessera/distributed/dist_tensor.h"

#include <exception>

#include <fmt/format.h>

#include "distributed/kv_client.h"
#include "job/tensor_registry.h"
#include "tessera/store/partition_store.h"
#include "tessera/base/error.h"

namespace tessera::distributed {

struct DistTensor::State {
  Context* ctx = nullptr;
  store::TensorSpec spec;
  bool owner = false;  // this handle deletes the tensor when it goes

  ~State() {
    // After finalize, or unwinding from an error, servers may be gone; the
    // job's teardown removes the segments.
    if (!owner || spec.persistent || ctx->finalized() || std::uncaught_exceptions() > 0) return;
    try {
      delete_tensor(*ctx, spec.name);
    } catch (const std::exception& e) {
      fmt::print(stderr, "warning: could not delete tensor {}: {}\n", spec.name, e.what());
    }
  }
};

DistTensor::DistTensor(Context& ctx, const std::string& name, DType dtype, std::vector<int64_t> row_shape,
                       const std::string& policy, store::Initializer init, bool persistent)
    : state_(std::make_shared<State>()) {
  state_->ctx = &ctx;
  store::TensorSpec& spec = state_->spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.row_shape = std::move(row_shape);
  spec.policy = policy;
  spec.init = init;
  spec.persistent = persistent;
  if (name.empty() || name.find('/') != std::string::npos)
    fail("tensor name '{}' must be non-empty and may not contain '/'", name);
  ctx.book().space(policy);  // checks the policy before any trainer sends a request
  bool existed = false;
  if (ctx.rank() == 0) {
    store::TensorSpec published;
    existed = ctx.standalone() ? ctx.local().find(name) != nullptr
                               : job::find_published_spec(*ctx.rendezvous(), ctx.num_parts(), name, &published);
    create_tensor(ctx, spec);
  }
  ctx.barrier();
  // Drop any mapping of an earlier tensor of this name; the next use maps
  // the current segment.
  if (!ctx.standalone() && ctx.has_local_part()) ctx.local().remove(name);
  state_->owner = ctx.rank() == 0 && !existed;
}

DistTensor DistTensor::open(Context& ctx, const std::string& name) {
  DistTensor t;
  t.state_ = std::make_shared<State>();
  t.state_->ctx = &ctx;
  if (const store::LocalTensor* local = ctx.local_tensor(name)) {
    t.state_->spec = local->spec;
    return t;
  }
  if (!ctx.standalone() && job::find_published_spec(*ctx.rendezvous(), ctx.num_parts(), name, &t.state_->spec)) return t;
  if (!ctx.has_local_part()) fail("no tensor named '{}' on the servers", name);
  std::string known;
  for (const std::string& n : ctx.local().names()) known += (known.empty() ? "" : ", ") + n;
  fail("no tensor named '{}' (this partition holds: {})", name, known);
}

const store::TensorSpec& DistTensor::spec() const { return state_->spec; }

int64_t DistTensor::num_rows() const { return state_->ctx->book().space(state_->spec.policy).size(); }

std::vector<int64_t> DistTensor::shape() const { return state_->spec.shape(num_rows()); }

Array DistTensor::pull(const int64_t* ids, int64_t count) const {
  return pull_rows(*state_->ctx, state_->spec, ids, count);
}

void DistTensor::push(const int64_t* ids, int64_t count, const Array& values, store::PushMode mode) const {
  const store::TensorSpec& spec = state_->spec;
  if (values.dtype() != spec.dtype || values.ndim() == 0 || values.rows() != count ||
      values.numel() != count * spec.row_elems())
    fail("push to {}: expected {} rows of {} {} values, got {} array of shape {}", spec.name, count, spec.row_elems(),
         dtype_name(spec.dtype), dtype_name(values.dtype()), values.shape_string());
  push_rows(*state_->ctx, spec, ids, count, values.raw(), mode);
}

}  // namespace tessera::distributed
