// torch.distributed's backend "tessera": a c10d::ProcessGroup over the job's
// collectives (a ring of its own on the secured transport, Context::
// new_collectives), so that a Python script's own
// init_process_group("tessera") and DistributedDataParallel move their
// gradients encrypted, where "gloo" sends them in the clear. `import tessera`
// registers it (tessera/__init__.py).
//
// The operations DistributedDataParallel and the common calls use:
// all-reduce (every ReduceOp but AVG and PREMUL_SUM; sums of float32,
// float64 and int64 on the ring), broadcast and all-gather (any dtype),
// barrier. Each runs to completion on the calling thread and returns
// a finished Work whose future holds the tensors, as DDP's reducer reads
// them. Tensors must be on the CPU; the others raise naming the operation.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/extension.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

#include <pybind11/chrono.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "tessera/base/error.h"
#include "tessera/distributed/collectives.h"
#include "tessera/distributed/context.h"

namespace tessera::python {
namespace {

using distributed::Collectives;

// What a backend's creator returns: in torch 1.13 a ProcessGroup; from torch 2.0 on a Backend, which torch
// wraps in a ProcessGroup of its own (and the Python class to derive from moves with it).
#if TORCH_VERSION_MAJOR >= 2
using GroupBase = c10d::Backend;
constexpr const char* kGroupBaseModule = "torch._C._distributed_c10d";
constexpr const char* kGroupBaseClass = "Backend";
#else
using GroupBase = c10d::ProcessGroup;
constexpr const char* kGroupBaseModule = "torch.distributed";
constexpr const char* kGroupBaseClass = "ProcessGroup";
#endif

// Done when made: the operations below are synchronous.
class FinishedWork : public c10d::Work {
 public:
  explicit FinishedWork(std::vector<at::Tensor> tensors)
      : future_(c10::make_intrusive<at::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))),
        tensors_(std::move(tensors)) {
    future_->markCompleted(c10::IValue(tensors_));
  }
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
  std::vector<at::Tensor> result() override { return tensors_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::vector<at::Tensor> tensors_;
};

class TesseraProcessGroup : public GroupBase {
 public:
  TesseraProcessGroup(std::unique_ptr<Collectives> collectives, int rank, int size)
      : GroupBase(rank, size), collectives_(std::move(collectives)) {}

  const std::string getBackendName() const override { return "tessera"; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override {
    for (at::Tensor& t : tensors) reduce_in_place(t, opts.reduceOp);
    return c10::make_intrusive<FinishedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override {
    return allreduce(tensors, opts);
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override {
    for (at::Tensor& t : tensors) {
      at::Tensor dense = cpu_contiguous(t, "broadcast");
      collectives_->broadcast_bytes(dense.data_ptr(), dense.nbytes(), static_cast<int>(opts.rootRank));
      if (!dense.is_same(t)) t.copy_(dense);
    }
    return c10::make_intrusive<FinishedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions&) override {
    if (outputs.size() != inputs.size()) fail("torch.distributed backend 'tessera': all_gather needs one output list per input");
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (static_cast<int>(outputs[k].size()) != getSize())
        fail("torch.distributed backend 'tessera': all_gather needs {} output tensors, got {}", getSize(),
             outputs[k].size());
      outputs[k][getRank()].copy_(inputs[k]);
      // One broadcast per member, from that member.
      for (int r = 0; r < getSize(); ++r) {
        at::Tensor dense = cpu_contiguous(outputs[k][r], "all_gather");
        collectives_->broadcast_bytes(dense.data_ptr(), dense.nbytes(), r);
        if (!dense.is_same(outputs[k][r])) outputs[k][r].copy_(dense);
      }
    }
    std::vector<at::Tensor> all;
    for (const auto& list : outputs) all.insert(all.end(), list.begin(), list.end());
    return c10::make_intrusive<FinishedWork>(all);
  }

  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override {
    std::vector<std::vector<at::Tensor>> outputs{output.chunk(getSize())};
    std::vector<at::Tensor> inputs{input};
    allgather(outputs, inputs, opts);
    return c10::make_intrusive<FinishedWork>(std::vector<at::Tensor>{output});
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
    collectives_->barrier();
    return c10::make_intrusive<FinishedWork>(std::vector<at::Tensor>{});
  }

 private:
  static at::Tensor cpu_contiguous(const at::Tensor& t, const char* op) {
    if (!t.device().is_cpu())
      fail("torch.distributed backend 'tessera': {} of a tensor on {} (CPU tensors only)", op, t.device().str());
    return t.contiguous();
  }

  // Sums of float32, float64 and int64 take the ring's all-reduce; the
  // other operations and dtypes (DDP's join asks for a MAX, scripts for
  // int32 sums) gather every member's tensor and reduce here, which suits
  // the small tensors they are used on.
  void reduce_in_place(at::Tensor& t, c10d::ReduceOp::RedOpType op) {
    at::Tensor dense = cpu_contiguous(t, "all_reduce");
    const at::ScalarType type = dense.scalar_type();
    if (op == c10d::ReduceOp::SUM && type == at::kFloat) {
      collectives_->all_reduce_sum(dense.data_ptr<float>(), dense.numel());
    } else if (op == c10d::ReduceOp::SUM && type == at::kDouble) {
      collectives_->all_reduce_sum(dense.data_ptr<double>(), dense.numel());
    } else if (op == c10d::ReduceOp::SUM && type == at::kLong) {
      collectives_->all_reduce_sum(dense.data_ptr<int64_t>(), dense.numel());
    } else {
      at::Tensor all = at::empty({getSize(), dense.numel()}, dense.options());
      all[getRank()].copy_(dense.flatten());
      for (int r = 0; r < getSize(); ++r) collectives_->broadcast_bytes(all[r].data_ptr(), dense.nbytes(), r);
      dense.copy_(fold(all, op).view(dense.sizes()));
    }
    if (!dense.is_same(t)) t.copy_(dense);
  }

  static at::Tensor fold(const at::Tensor& all, c10d::ReduceOp::RedOpType op) {
    switch (op) {
      case c10d::ReduceOp::SUM: return all.sum(0, false, all.scalar_type());
      case c10d::ReduceOp::PRODUCT: return all.prod(0, false, all.scalar_type());
      case c10d::ReduceOp::MIN: return std::get<0>(all.min(0));
      case c10d::ReduceOp::MAX: return std::get<0>(all.max(0));
      case c10d::ReduceOp::BAND:
      case c10d::ReduceOp::BOR:
      case c10d::ReduceOp::BXOR: {
        at::Tensor out = all[0].clone();
        for (int64_t r = 1; r < all.size(0); ++r)
          out = op == c10d::ReduceOp::BAND ? out.bitwise_and(all[r])
                : op == c10d::ReduceOp::BOR ? out.bitwise_or(all[r])
                                             : out.bitwise_xor(all[r]);
        return out;
      }
      default: fail("torch.distributed backend 'tessera': this ReduceOp is not supported (SUM, PRODUCT, MIN, MAX, "
                    "BAND, BOR and BXOR are)");
    }
  }

  std::unique_ptr<Collectives> collectives_;
};

int g_groups = 0;  // numbers the groups a process makes: every trainer makes them in the same order

// torch.distributed.Backend.register_backend's creator: (store, rank, size,
// timeout). The group meets in the job's own rendezvous store, not in
// torch's, so `store` goes unused; the ranks must be the job's.
c10::intrusive_ptr<GroupBase> create_group(const c10::intrusive_ptr<c10d::Store>&, int rank, int size,
                                           std::chrono::milliseconds) {
  distributed::Context& ctx = context();
  if (rank != ctx.rank() || size != ctx.world_size())
    fail("torch.distributed backend 'tessera' covers the job's trainers: rank {} of {} was asked, the job has this "
         "trainer as rank {} of {} (subgroups are not supported)",
         rank, size, ctx.rank(), ctx.world_size());
  std::unique_ptr<Collectives> collectives;
  {
    py::gil_scoped_release release;
    collectives = ctx.new_collectives("torch-" + std::to_string(g_groups++));
  }
  return c10::make_intrusive<TesseraProcessGroup>(std::move(collectives), rank, size);
}

}  // namespace

void bind_process_group(py::module_& m) {
  py::object base = py::module_::import(kGroupBaseModule).attr(kGroupBaseClass);
  py::class_<TesseraProcessGroup, c10::intrusive_ptr<TesseraProcessGroup>>(m, "ProcessGroup", base);
  m.def("_create_process_group", &create_group,
        "torch.distributed's creator of the 'tessera' backend: (store, rank, world_size, timeout)");
}

}  // namespace tessera::python
