// The partition book, bound: tessera.distributed's GraphPartitionBook (DGL's
// RangePartitionBook) asks the C++ PartitionBook which partition owns an ID
// and how type-local and homogeneous IDs map, over whole ID tensors at
// once; Python keeps only DGL's names and argument conventions.
#include <torch/extension.h>

#include <fmt/format.h>

#include "bindings.h"
#include "convert.h"
#include "tessera/partition/partition_book.h"

namespace tessera::python {
namespace {

// A book and the config it was built from (owner_of_homogeneous needs the node count).
struct BoundBook {
  explicit BoundBook(const PartitionConfig& c) : config(c), book(config) {}
  PartitionConfig config;
  PartitionBook book;
};

[[noreturn]] void out_of_range(const char* what, int64_t id, int64_t size) {
  throw py::index_error(fmt::format("{} ID {} is outside 0..{}", what, id, size - 1));
}

// Owning partitions of type-local IDs of `policy`'s space.
torch::Tensor owners(const BoundBook& b, const std::string& policy, const torch::Tensor& ids_in, const char* what) {
  const torch::Tensor ids = id_tensor(ids_in, "IDs");
  const IdSpace& space = b.book.space(policy);
  torch::Tensor out = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    o[i] = space.owner(in[i]);
    if (o[i] < 0) out_of_range(what, in[i], space.size());
  }
  return out;
}

// Homogeneous node IDs -> (node type, type-local ID, owning partition).
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> split_homogeneous(const BoundBook& b,
                                                                          const torch::Tensor& ids_in) {
  const torch::Tensor ids = id_tensor(ids_in, "node IDs");
  torch::Tensor types = torch::empty_like(ids), local = torch::empty_like(ids), parts = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const PartitionBook::TypedNode t = b.book.typed_node(in[i]);
    if (t.ntype < 0) out_of_range("node", in[i], b.config.num_nodes);
    types.data_ptr<int64_t>()[i] = t.ntype;
    local.data_ptr<int64_t>()[i] = t.id;
    parts.data_ptr<int64_t>()[i] = b.book.node_space(t.ntype).owner(t.id);
  }
  return {types, local, parts};
}

// Type-local IDs of node type `ntype` -> homogeneous IDs.
torch::Tensor homogeneous(const BoundBook& b, int ntype, const torch::Tensor& ids_in) {
  const torch::Tensor ids = id_tensor(ids_in, "node IDs");
  const IdSpace& space = b.book.node_space(ntype);
  torch::Tensor out = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (space.owner(in[i]) < 0) out_of_range("node", in[i], space.size());
    out.data_ptr<int64_t>()[i] = b.book.homogeneous_node(ntype, in[i]);
  }
  return out;
}

// Homogeneous edge IDs -> (edge type, type-local ID).
std::tuple<torch::Tensor, torch::Tensor> split_homogeneous_edges(const BoundBook& b, const torch::Tensor& ids_in) {
  const torch::Tensor ids = id_tensor(ids_in, "edge IDs");
  torch::Tensor types = torch::empty_like(ids), local = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const PartitionBook::TypedEdge t = b.book.typed_edge(in[i]);
    if (t.etype < 0) out_of_range("edge", in[i], b.config.num_edges);
    types.data_ptr<int64_t>()[i] = t.etype;
    local.data_ptr<int64_t>()[i] = t.id;
  }
  return {types, local};
}

// Type-local IDs of edge type `etype` -> homogeneous IDs.
torch::Tensor homogeneous_edges(const BoundBook& b, int etype, const torch::Tensor& ids_in) {
  const torch::Tensor ids = id_tensor(ids_in, "edge IDs");
  const IdSpace& space = b.book.edge_space(etype);
  torch::Tensor out = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    if (space.owner(in[i]) < 0) out_of_range("edge", in[i], space.size());
    out.data_ptr<int64_t>()[i] = b.book.homogeneous_edge(etype, in[i]);
  }
  return out;
}

}  // namespace

void bind_partition_book(py::module_& m) {
  py::class_<BoundBook>(m, "PartitionBook")
      .def(py::init([](const std::string& part_config) { return BoundBook(PartitionConfig::load(part_config)); }),
           py::arg("part_config"))
      // The book of the job this process joined (initialize()).
      .def_static("of_job", [] { return BoundBook(context().config()); })
      .def_property_readonly("num_parts", [](const BoundBook& b) { return b.book.num_parts(); })
      // [starts] of a policy's space: partition p owns type-local IDs [starts[p], starts[p+1]).
      .def("starts", [](const BoundBook& b, const std::string& policy) { return b.book.space(policy).starts; })
      // First homogeneous node ID of node type `ntype` in each partition.
      .def("homogeneous_first", [](const BoundBook& b, int ntype) { return b.book.node_space(ntype).homogeneous_first; })
      .def("owners", &owners, py::arg("policy"), py::arg("ids"), py::arg("what"))
      .def("split_homogeneous", &split_homogeneous, py::arg("ids"))
      .def("homogeneous", &homogeneous, py::arg("ntype"), py::arg("ids"))
      .def("split_homogeneous_edges", &split_homogeneous_edges, py::arg("ids"))
      .def("homogeneous_edges", &homogeneous_edges, py::arg("etype"), py::arg("ids"));
}

}  // namespace tessera::python
