#include "server/store_service.h"

#include <fmt/format.h>

#include "server/server_state.h"
#include "job/tensor_registry.h"
#include "store/tensor_ops.h"
#include "tessera/base/error.h"
#include "tessera/store/sparse_step.h"

namespace tessera::server {
namespace {

using net::ProtocolError;

net::Frames serve_pull(ServerState& state, net::Request& request, net::Header* reply) {
  store::LocalTensor& t = state.tensor(net::header_name(request.header));
  int64_t n = 0;
  const int64_t* rows = net::ids_frame(request, 0, &n);
  Array out = store::gather_rows(t, rows, n, state.locks);
  net::set_shape(reply, out.dtype(), out.shape());
  net::Frames frames;
  frames.push_back(net::frame_of(out));
  return frames;
}

net::Frames serve_push(ServerState& state, net::Request& request, net::Header*) {
  store::LocalTensor& t = state.tensor(net::header_name(request.header));
  int64_t n = 0;
  const int64_t* rows = net::ids_frame(request, 0, &n);
  if (request.frames.size() != 2) throw ProtocolError("push needs ids and values frames");
  net::check_frame(request.frames[1].size(), t.rows.dtype(), n, t.spec.row_elems(), "values");
  if (request.header.iarg == static_cast<int64_t>(store::PushMode::kAdd))
    store::add_rows(t, rows, n, request.frames[1].data(), state.locks);
  else
    store::assign_rows(t, rows, n, request.frames[1].data(), state.locks);
  return {};
}

net::Frames serve_sparse_step(ServerState& state, net::Request& request, net::Header*) {
  const net::Header& h = request.header;
  const std::string name = net::header_name(h);
  store::LocalTensor& w = state.tensor(name);
  int64_t n = 0;
  const int64_t* rows = net::ids_frame(request, 0, &n);
  if (request.frames.size() != 2) throw ProtocolError("sparse step needs ids and gradient frames");
  net::check_frame(request.frames[1].size(), DType::kFloat32, n, w.spec.row_elems(), "gradients");
  store::SparseStepParams p;
  p.kind = static_cast<store::SparseOptimizer>(h.iarg);
  p.lr = h.fargs[0];
  p.eps = h.fargs[1];
  p.beta1 = h.fargs[2];
  p.beta2 = h.fargs[3];
  store::apply_sparse_step([&state](const std::string& s) -> store::LocalTensor& { return state.tensor(s); }, name, p,
                           rows, n, request.frames[1].data<float>(), state.locks);
  return {};
}

// In shared memory, so that backup servers and co-located trainers map the
// same rows; published in the rendezvous store for the other machines.
net::Frames serve_create(ServerState& state, net::Request& request, net::Header*) {
  if (request.frames.size() != 1) throw ProtocolError("create needs one spec frame");
  const store::TensorSpec spec = store::TensorSpec::from_json(request.frames[0].to_string());
  if (spec.name.find('/') != std::string::npos)
    fail("tensor name '{}' may not contain '/' (reserved for the partition's own arrays)", spec.name);
  if (!state.main()) fail("tensors are created by the main server (server 0), not {}", state.who);
  if (store::LocalTensor* existing = state.partition->find(spec.name)) {
    if (existing->spec.dtype != spec.dtype || existing->spec.row_shape != spec.row_shape ||
        existing->spec.policy != spec.policy)
      fail("tensor '{}' exists with another type or shape ({} rows of {} {} by {})", spec.name,
           existing->num_rows(), existing->spec.row_elems(), dtype_name(existing->spec.dtype), existing->spec.policy);
    return {};
  }
  const IdSpace& space = state.book.space(spec.policy);
  const int part = state.env.machine_id;
  const std::string segment = store::segment_name(state.segment_prefix, spec.name);
  store::LocalTensor& t = state.partition->add(
      store::create_shared_tensor(spec, space.starts[part], space.starts[part + 1] - space.starts[part], segment));
  state.owned_segments.names.push_back(segment);
  job::publish_tensor(*state.rendezvous, part, t);
  return {};
}

net::Frames serve_delete(ServerState& state, net::Request& request, net::Header*) {
  const std::string name = net::header_name(request.header);
  store::LocalTensor* t = state.partition->find(name);
  if (t == nullptr || !t->shm) return {};  // unknown here or a partition array: nothing to free
  if (state.main()) {
    job::unpublish_tensor(*state.rendezvous, state.env.machine_id, name);
    t->shm->unlink();
    state.owned_segments.forget(t->shm->name());
  }
  state.partition->remove(name);
  return {};
}

[[maybe_unused]] const bool kStoreServices =
    partition_services().add(kPull, "store: pull", serve_pull) &&
    partition_services().add(kPush, "store: push", serve_push) &&
    partition_services().add(kSparseStep, "store: sparse step", serve_sparse_step) &&
    partition_services().add(kCreate, "store: create", serve_create) &&
    partition_services().add(kDelete, "store: delete", serve_delete);

}  // namespace
}  // namespace tessera::server
