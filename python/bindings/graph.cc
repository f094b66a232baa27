// Bindings of the graph services on a DistGraph (DGL's dgl.distributed graph-level API): degrees, the ends of
// edges, one layer's neighbour sample as edge lists, and to_block's relabelling. Each call batches its IDs per
// owning partition in C++ and releases the GIL while the servers answer.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "tessera/base/error.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/sampling/dist_sampler.h"
#include "tessera/sampling/to_block.h"

namespace tessera::python {
namespace {

std::vector<int64_t> as_vector(const torch::Tensor& t) {
  return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
}

// Degrees of homogeneous node IDs, counting the edges of `etype` (canonical "src:rel:dst"; "" for all).
torch::Tensor degrees(const torch::Tensor& nodes_in, bool in, const std::string& etype) {
  distributed::Context& ctx = context();
  const torch::Tensor nodes = checked_ids(nodes_in, ctx.config().num_nodes, "nodes");
  std::vector<int64_t> out;
  {
    py::gil_scoped_release release;
    const distributed::DistGraph graph(ctx);
    out = in ? graph.in_degrees(as_vector(nodes), etype) : graph.out_degrees(as_vector(nodes), etype);
  }
  return to_tensor(std::move(out));
}

py::tuple find_edges(const torch::Tensor& eids_in) {
  distributed::Context& ctx = context();
  const torch::Tensor eids = checked_ids(eids_in, ctx.config().num_edges, "edge IDs");
  std::pair<std::vector<int64_t>, std::vector<int64_t>> ends;
  {
    py::gil_scoped_release release;
    ends = distributed::DistGraph(ctx).find_edges(as_vector(eids));
  }
  return py::make_tuple(to_tensor(std::move(ends.first)), to_tensor(std::move(ends.second)));
}

torch::Tensor has_edges(const torch::Tensor& src_in, const torch::Tensor& dst_in, const std::string& etype) {
  distributed::Context& ctx = context();
  const torch::Tensor src = checked_ids(src_in, ctx.config().num_nodes, "source nodes");
  const torch::Tensor dst = checked_ids(dst_in, ctx.config().num_nodes, "destination nodes");
  if (src.numel() != dst.numel())
    throw ValueError(fmt::format("{} sources but {} destinations", src.numel(), dst.numel()));
  std::vector<bool> found;
  {
    py::gil_scoped_release release;
    found = distributed::DistGraph(ctx).has_edges(as_vector(src), as_vector(dst), etype);
  }
  torch::Tensor out = torch::empty({src.numel()}, torch::kBool);
  bool* p = out.data_ptr<bool>();
  for (int64_t i = 0; i < src.numel(); ++i) p[i] = found[i];
  return out;
}

// One layer's sample of `nodes` (unique): (sources, destinations, edge IDs,
// edge types or None), destinations in node order.
py::tuple sample_neighbors(const torch::Tensor& nodes_in, int64_t fanout, std::vector<int64_t> etype_fanouts,
                           bool replace, std::vector<std::string> weights, uint64_t key) {
  distributed::Context& ctx = context();
  const torch::Tensor nodes = checked_ids(nodes_in, ctx.config().num_nodes, "nodes");
  sampling::SamplerOptions options;
  options.fanouts = {fanout};
  options.replace = replace;
  options.weights = std::move(weights);
  sampling::SampledEdges edges;
  const std::vector<int64_t> seeds = as_vector(nodes);
  {
    py::gil_scoped_release release;
    const sampling::DistNeighborSampler sampler(ctx, options);
    sampling::FanoutSpec spec;
    spec.fanout = fanout;
    spec.etype_fanouts = std::move(etype_fanouts);
    spec.replace = replace;
    spec.key = key;
    sampler.sample_layer(seeds, spec, sampling::Channel{ctx.standalone() ? nullptr : &ctx.client(), 0}, &edges);
  }
  std::vector<int64_t> dst;
  dst.reserve(edges.src.size());
  for (size_t i = 0; i < seeds.size(); ++i) dst.insert(dst.end(), edges.counts[i], seeds[i]);
  py::object etypes = py::none();
  if (!edges.etypes.empty()) etypes = py::cast(to_tensor(std::move(edges.etypes)));
  return py::make_tuple(to_tensor(std::move(edges.src)), to_tensor(std::move(dst)), to_tensor(std::move(edges.eids)),
                        etypes);
}

// to_block's relabelling: (num_dst, src_nodes, indptr, indices, eids, order).
py::tuple to_block(const torch::Tensor& src_in, const torch::Tensor& dst_in, const torch::Tensor& eids_in,
                   const torch::Tensor& dst_nodes_in, int64_t num_nodes) {
  const torch::Tensor src = checked_ids(src_in, num_nodes, "to_block: edge sources");
  const torch::Tensor dst = checked_ids(dst_in, num_nodes, "to_block: edge destinations");
  const torch::Tensor eids = id_tensor(eids_in, "to_block: edge IDs");
  const torch::Tensor dst_nodes = checked_ids(dst_nodes_in, num_nodes, "to_block: dst_nodes");
  if (src.numel() != dst.numel() || eids.numel() != src.numel())
    throw ValueError("to_block: sources, destinations and edge IDs differ in length");
  std::vector<int64_t> order;
  sampling::Block block;
  {
    py::gil_scoped_release release;
    // One builder per thread, grown to the largest graph it has seen.
    thread_local std::unique_ptr<sampling::BlockBuilder> builder;
    thread_local int64_t builder_nodes = -1;
    if (builder_nodes < num_nodes) {
      builder = std::make_unique<sampling::BlockBuilder>(num_nodes);
      builder_nodes = num_nodes;
    }
    try {
      block = sampling::to_block(src.data_ptr<int64_t>(), dst.data_ptr<int64_t>(), eids.data_ptr<int64_t>(),
                                 src.numel(), as_vector(dst_nodes), *builder, &order);
    } catch (const Error& e) {
      builder_nodes = -1;  // a build that threw leaves slots set
      throw ValueError(e.what());  // the arguments were wrong, not the job
    }
  }
  return py::make_tuple(block.num_dst, to_tensor(std::move(block.src_nodes)), to_tensor(std::move(block.indptr)),
                        to_tensor(std::move(block.indices)), to_tensor(std::move(block.eids)),
                        to_tensor(std::move(order)));
}

}  // namespace

void bind_graph(py::module_& m) {
  m.def("in_degrees", [](const torch::Tensor& nodes, const std::string& etype) { return degrees(nodes, true, etype); },
        py::arg("nodes"), py::arg("etype") = "");
  m.def("out_degrees", [](const torch::Tensor& nodes, const std::string& etype) { return degrees(nodes, false, etype); },
        py::arg("nodes"), py::arg("etype") = "");
  m.def("find_edges", &find_edges, py::arg("eids"));
  m.def("has_edges", &has_edges, py::arg("src"), py::arg("dst"), py::arg("etype") = "");
  m.def("sample_neighbors", &sample_neighbors, py::arg("nodes"), py::arg("fanout"), py::arg("etype_fanouts"),
        py::arg("replace"), py::arg("weights"), py::arg("key"));
  m.def("to_block", &to_block, py::arg("src"), py::arg("dst"), py::arg("eids"), py::arg("dst_nodes"),
        py::arg("num_nodes"));
}

}  // namespace tessera::python
