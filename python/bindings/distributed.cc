// Bindings of the distributed part: the process's Context, DistTensor, DistEmbedding, the sparse optimizers and
// node_split. The DGL-shaped classes live in Python (tessera/distributed); these are the objects they hold.
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "tessera/base/error.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/distributed/dist_tensor.h"
#include "tessera/job/job_env.h"
#include "tessera/distributed/node_split.h"
#include "tessera/distributed/remote_row_cache.h"
#include "tessera/store/partition_store.h"

namespace tessera::python {

namespace {

using distributed::Context;
using distributed::DistEmbedding;
using distributed::DistTensor;

// One Context per process. A raw pointer on purpose: it is finished (or, after
// an error, abandoned) from Python's atexit, never by a static destructor
// running after the interpreter is gone. It is never deleted either: the
// script's DistTensors, embeddings and graphs hold it, and at exit Python
// frees them after atexit ran. A finished Context refuses requests, and a
// handle going away leaves the servers alone.
Context* g_context = nullptr;

void initialize(const std::string& part_config, const std::string& ip_config, bool standalone, int num_threads) {
  if (g_context != nullptr)
    throw std::runtime_error("tessera.distributed.initialize() was already called in this process");
  // A server role never returns (the process ends when the job does), so
  // whatever Python printed so far must reach the log first.
  std::fflush(nullptr);
  distributed::InitOptions options;
  options.standalone = standalone;
  options.part_config = part_config;
  options.ip_config = ip_config;
  options.num_threads = num_threads;
  std::unique_ptr<Context> ctx;
  {
    py::gil_scoped_release release;
    ctx = distributed::initialize(options);
  }
  g_context = ctx.release();
}

py::dict job_info() {
  Context& ctx = context();
  const PartitionConfig& config = ctx.config();
  py::dict info;
  info["rank"] = ctx.rank();
  info["world_size"] = ctx.world_size();
  info["machine_id"] = ctx.machine_id();
  info["num_parts"] = ctx.num_parts();
  info["local_part"] = ctx.local_part();
  info["standalone"] = ctx.standalone();
  info["num_samplers"] = ctx.env().num_samplers;
  info["trainer_id"] = ctx.env().trainer_id;
  info["num_trainers"] = ctx.env().num_trainers;
  info["part_config"] = ctx.part_config_path();
  info["graph_name"] = config.graph_name;
  info["ntypes"] = config.ntypes;
  info["etypes"] = config.etypes;
  info["node_map"] = config.node_map;
  info["edge_map"] = config.edge_map;
  info["num_nodes"] = config.num_nodes;
  info["num_edges"] = config.num_edges;
  py::dict node_data, edge_data;
  for (const auto& [type, names] : config.node_feat_schema) {
    py::list list;
    for (const auto& entry : names) list.append(entry.first);
    node_data[py::str(type)] = list;
  }
  for (const auto& [type, names] : config.edge_feat_schema) {
    py::list list;
    for (const auto& entry : names) list.append(entry.first);
    edge_data[py::str(type)] = list;
  }
  info["node_data"] = node_data;
  info["edge_data"] = edge_data;
  return info;
}

// Every ID within [0, rows): IndexError naming the tensor otherwise, before
// anything is sent.
void check_range(const torch::Tensor& ids, int64_t rows, const std::string& name) {
  const int64_t* p = ids.data_ptr<int64_t>();
  for (int64_t i = 0, n = ids.numel(); i < n; ++i)
    if (p[i] < 0 || p[i] >= rows)
      throw py::index_error(fmt::format("'{}': ID {} (position {}) is outside 0..{}", name, p[i], i, rows - 1));
}

torch::Tensor pull(const DistTensor& t, const torch::Tensor& ids_in) {
  const torch::Tensor ids = id_tensor(ids_in, "'" + t.name() + "'");
  check_range(ids, t.num_rows(), t.name());
  Array rows;
  {
    py::gil_scoped_release release;
    rows = t.pull(ids.data_ptr<int64_t>(), ids.numel());
  }
  return to_tensor(rows);
}

Array checked_rows(const DistTensor& t, const torch::Tensor& ids, const torch::Tensor& values) {
  const store::TensorSpec& spec = t.spec();
  const std::string what = "'" + t.name() + "'";
  if (dtype_of_tensor(values, what) != spec.dtype)
    throw TypeError(fmt::format("{}: values are {} but the tensor holds {}", what,
                                std::string(c10::toString(values.scalar_type())), dtype_name(spec.dtype)));
  std::vector<int64_t> expected{ids.numel()};
  expected.insert(expected.end(), spec.row_shape.begin(), spec.row_shape.end());
  if (std::vector<int64_t>(values.sizes().begin(), values.sizes().end()) != expected) {
    std::string want = "(";
    for (size_t i = 0; i < expected.size(); ++i) want += (i ? ", " : "") + std::to_string(expected[i]);
    want += expected.size() == 1 ? ",)" : ")";
    throw ValueError(fmt::format("{}: values of shape {} for {} IDs; expected {}", what, shape_string(values),
                                 ids.numel(), want));
  }
  return to_array(values, what);
}

void push(const DistTensor& t, const torch::Tensor& ids_in, const torch::Tensor& values, bool add) {
  const torch::Tensor ids = id_tensor(ids_in, "'" + t.name() + "'");
  check_range(ids, t.num_rows(), t.name());
  const Array rows = checked_rows(t, ids, values);
  py::gil_scoped_release release;
  t.push(ids.data_ptr<int64_t>(), ids.numel(), rows, add ? store::PushMode::kAdd : store::PushMode::kAssign);
}

store::Initializer initializer(const std::string& kind, double a, double b, uint64_t seed) {
  store::Initializer init;
  init.kind = kind;
  init.a = a;
  init.b = b;
  init.seed = seed;
  return init;
}

bool tensor_exists(const std::string& name) {
  try {
    DistTensor::open(context(), name);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Gradients of one lookup, applied by a sparse optimizer.
void optimizer_step(distributed::SparseOptimizer& opt, const DistEmbedding& emb, const torch::Tensor& ids_in,
                    const torch::Tensor& grads_in) {
  const torch::Tensor ids = id_tensor(ids_in, "'" + emb.name() + "'");
  const torch::Tensor grads = grads_in.to(torch::kFloat32).contiguous();
  if (grads.dim() != 2 || grads.size(0) != ids.numel() || grads.size(1) != emb.dim())
    throw ValueError(fmt::format("'{}': gradient of shape {} for {} IDs of dimension {}", emb.name(),
                                 shape_string(grads), ids.numel(), emb.dim()));
  py::gil_scoped_release release;
  opt.step_async(emb, ids.data_ptr<int64_t>(), ids.numel(), grads.data_ptr<float>());
}

std::vector<const DistEmbedding*> pointers(const std::vector<DistEmbedding*>& embs) {
  return std::vector<const DistEmbedding*>(embs.begin(), embs.end());
}

}  // namespace

Context& context() {
  if (g_context == nullptr)
    throw std::runtime_error("Tessera is not initialized: call tessera.distributed.initialize() first");
  g_context->check_not_finalized("tessera.distributed");
  return *g_context;
}

void bind_distributed(py::module_& m) {
  m.def("initialize", &initialize, py::arg("part_config"), py::arg("ip_config"), py::arg("standalone"),
        py::arg("num_threads"));
  m.def("is_initialized", [] { return g_context != nullptr; });
  // Whether a launcher (or srun / mpirun with TESSERA_IP_CONFIG) gave this process a role in a job.
  m.def("launched", [] { return job::JobEnv::from_environment().role != job::Role::kStandalone; });
  m.def("finalize", [] {
    if (g_context == nullptr || g_context->finalized()) return;
    py::gil_scoped_release release;
    g_context->finalize();
  });
  // After an error, peers may be dead: no collective call, nothing waited on.
  m.def("abandon", [] {
    if (g_context != nullptr) g_context->abandon();
  });
  m.def("job_info", &job_info);
  m.def("barrier", [] {
    py::gil_scoped_release release;
    context().barrier();
  });
  m.def("tensor_exists", &tensor_exists);
  m.def("node_tensor_name", &store::node_tensor_name);
  m.def("edge_tensor_name", &store::edge_tensor_name);

  py::class_<DistTensor>(m, "DistTensor")
      .def(py::init([](const std::string& name, const std::string& dtype, std::vector<int64_t> row_shape,
                       const std::string& policy, const std::string& init, double a, double b, uint64_t seed,
                       bool persistent) {
             py::gil_scoped_release release;
             return DistTensor(context(), name, dtype_from_name(dtype), std::move(row_shape), policy,
                               initializer(init, a, b, seed), persistent);
           }),
           py::arg("name"), py::arg("dtype"), py::arg("row_shape"), py::arg("policy"), py::arg("init") = "zeros",
           py::arg("a") = 0.0, py::arg("b") = 0.0, py::arg("seed") = 0, py::arg("persistent") = false)
      .def_static("open", [](const std::string& name) { return DistTensor::open(context(), name); })
      .def_property_readonly("name", &DistTensor::name)
      .def_property_readonly("policy", [](const DistTensor& t) { return t.spec().policy; })
      .def_property_readonly("dtype", [](const DistTensor& t) { return dtype_name(t.spec().dtype); })
      .def_property_readonly("shape", &DistTensor::shape)
      .def_property_readonly("num_rows", &DistTensor::num_rows)
      .def("pull", &pull)
      .def("push", &push, py::arg("ids"), py::arg("values"), py::arg("add") = false);

  // Other machines' rows of a read-only node tensor (partition data) kept in this process, for its loaders and
  // reads to share (a RemoteRowCache); build() gives None where there is nothing to keep (standalone, fraction 0).
  py::class_<distributed::RemoteRowCache, std::shared_ptr<distributed::RemoteRowCache>>(m, "RemoteRowCache")
      .def_static("build", [](const std::string& tensor, double fraction, int64_t max_mb) {
             Context& ctx = context();
             const store::TensorSpec spec = DistTensor::open(ctx, tensor).spec();
             py::gil_scoped_release release;
             return distributed::RemoteRowCache::build(ctx, spec, fraction, max_mb << 20);
           }, py::arg("tensor"), py::arg("fraction"), py::arg("max_mb"))
      .def("pull", [](const distributed::RemoteRowCache& c, const DistTensor& t, const torch::Tensor& ids_in) {
             const torch::Tensor ids = id_tensor(ids_in, "'" + t.name() + "'");
             check_range(ids, t.num_rows(), t.name());
             Array rows;
             {
               py::gil_scoped_release release;
               Context& ctx = context();
               rows = c.pull(ctx, ctx.standalone() ? nullptr : &ctx.client(), 0, ids.data_ptr<int64_t>(), ids.numel());
             }
             return to_tensor(rows);
           }, py::arg("tensor"), py::arg("ids"))
      .def_property_readonly("num_rows", &distributed::RemoteRowCache::num_rows)
      .def_property_readonly("remote_ids_asked", &distributed::RemoteRowCache::remote_ids_asked)
      .def_property_readonly("remote_ids_found", &distributed::RemoteRowCache::remote_ids_found);

  py::class_<DistEmbedding>(m, "DistEmbedding")
      .def(py::init([](const std::string& name, int64_t dim, const std::string& policy, const std::string& init,
                       double a, double b, uint64_t seed) {
             py::gil_scoped_release release;
             return std::make_unique<DistEmbedding>(context(), name, dim, policy, initializer(init, a, b, seed));
           }),
           py::arg("name"), py::arg("dim"), py::arg("policy"), py::arg("init") = "zeros", py::arg("a") = 0.0,
           py::arg("b") = 0.0, py::arg("seed") = 0)
      .def_property_readonly("name", &DistEmbedding::name)
      .def_property_readonly("dim", &DistEmbedding::dim)
      .def_property_readonly("num_embeddings", &DistEmbedding::num_embeddings)
      .def_property_readonly("weight", &DistEmbedding::weight)
      .def("save", [](const DistEmbedding& e, const std::string& path) {
        py::gil_scoped_release release;
        e.save(path);
      })
      .def("load", [](const DistEmbedding& e, const std::string& path) {
        py::gil_scoped_release release;
        e.load(path);
      });

  py::class_<distributed::SparseOptimizer>(m, "SparseOptimizer")
      .def("step", &optimizer_step, py::arg("embedding"), py::arg("ids"), py::arg("grads"))
      .def("flush", [](distributed::SparseOptimizer& o) {
        py::gil_scoped_release release;
        o.flush();
      })
      .def("set_lr", &distributed::SparseOptimizer::set_lr);
  py::class_<distributed::SparseAdagrad, distributed::SparseOptimizer>(m, "SparseAdagrad")
      .def(py::init([](const std::vector<DistEmbedding*>& embs, double lr, double eps) {
             py::gil_scoped_release release;
             return std::make_unique<distributed::SparseAdagrad>(context(), pointers(embs), lr, eps);
           }),
           py::arg("embeddings"), py::arg("lr"), py::arg("eps"), py::keep_alive<1, 2>());
  py::class_<distributed::SparseAdam, distributed::SparseOptimizer>(m, "SparseAdam")
      .def(py::init([](const std::vector<DistEmbedding*>& embs, double lr, double beta1, double beta2, double eps) {
             py::gil_scoped_release release;
             return std::make_unique<distributed::SparseAdam>(context(), pointers(embs), lr, beta1, beta2, eps);
           }),
           py::arg("embeddings"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"),
           py::keep_alive<1, 2>());

  // For bench/python_sage.sh: seconds per pull of `ids` timed inside C++, to
  // set beside the same pull made from Python (t[ids]).
  m.def("_pull_seconds", [](const DistTensor& t, const torch::Tensor& ids_in, int repeats) {
    const torch::Tensor ids = id_tensor(ids_in, t.name());
    py::gil_scoped_release release;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) t.pull(ids.data_ptr<int64_t>(), ids.numel());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
  });
  m.def("node_split", [](const DistTensor& mask, bool force_even) {
    std::vector<int64_t> ids;
    {
      py::gil_scoped_release release;
      ids = distributed::node_split(context(), mask, force_even);
    }
    return to_tensor(std::move(ids));
  });
  m.def("even_range", [](int64_t n, int rank, int world) { return distributed::even_range(n, rank, world); });
  m.def("edge_split", [](const DistTensor& mask, bool force_even) {
    std::vector<int64_t> ids;
    {
      py::gil_scoped_release release;
      ids = distributed::edge_split(context(), mask, force_even);
    }
    return to_tensor(std::move(ids));
  });
}

}  // namespace tessera::python
