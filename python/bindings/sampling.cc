// Bindings of the sampling part: the distributed neighbour sampler and the data loader whose sampler threads
// (--num-samplers) sample blocks and fetch rows while Python trains on the previous batch.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "tessera/distributed/remote_row_cache.h"
#include "tessera/sampling/data_loader.h"
#include "tessera/sampling/dist_sampler.h"

namespace tessera::python {

namespace {

using sampling::DistDataLoader;
using sampling::DistNeighborSampler;

// A block as a tuple of tensors that take over its vectors:
// (num_dst, src_nodes, indptr, indices, eids, etypes or None, src_ntypes or None).
py::tuple block_tuple(sampling::Block&& b) {
  py::object etypes = py::none(), src_ntypes = py::none();
  if (!b.etypes.empty()) etypes = py::cast(to_tensor(std::move(b.etypes)));
  if (!b.src_ntypes.empty()) src_ntypes = py::cast(to_tensor(std::move(b.src_ntypes)));
  return py::make_tuple(b.num_dst, to_tensor(std::move(b.src_nodes)), to_tensor(std::move(b.indptr)),
                        to_tensor(std::move(b.indices)), to_tensor(std::move(b.eids)), etypes, src_ntypes);
}

py::object optional_tensor(const Array& a) {
  return a.empty_handle() ? py::none() : py::cast(to_tensor(a));
}

// An edge batch's pairs: (edge IDs, sources, destinations, negative sources,
// negative destinations, edge types, negative edge types), ends as positions
// in the batch's seeds; the types are None on a graph of one type.
py::tuple edge_tuple(sampling::EdgeBatch&& e) {
  py::object etypes = py::none(), neg_etypes = py::none();
  if (!e.etypes.empty()) {
    etypes = py::cast(to_tensor(std::move(e.etypes)));
    neg_etypes = py::cast(to_tensor(std::move(e.neg_etypes)));
  }
  return py::make_tuple(to_tensor(std::move(e.eids)), to_tensor(std::move(e.src)), to_tensor(std::move(e.dst)),
                        to_tensor(std::move(e.neg_src)), to_tensor(std::move(e.neg_dst)), etypes, neg_etypes);
}

// A batch laid out for PyG: (num_seeds, nodes, src, dst, eids, etypes or
// None, nodes per hop, edges per hop).
py::tuple pyg_tuple(sampling::PygSubgraph&& s) {
  py::object etypes = py::none();
  if (!s.etypes.empty()) etypes = py::cast(to_tensor(std::move(s.etypes)));
  return py::make_tuple(s.num_seeds, to_tensor(std::move(s.nodes)), to_tensor(std::move(s.src)),
                        to_tensor(std::move(s.dst)), to_tensor(std::move(s.eids)), etypes, s.nodes_per_hop,
                        s.edges_per_hop);
}

// The next batch as (seeds, [blocks], features or None, labels or None,
// {ntype: (positions, rows)}, edge pairs or None, the PyG layout or None,
// blocks[0]'s aggregated input rows or None, the sampler thread's
// (sample_s, fetch_s, sample_cpu_s, fetch_cpu_s) on it),
// or None at the end of the epoch.
py::object next_batch(DistDataLoader& loader) {
  auto batch = std::make_unique<sampling::MiniBatch>();
  bool more;
  {
    py::gil_scoped_release release;
    more = loader.next(batch.get());
  }
  if (!more) return py::none();
  py::list blocks;
  for (sampling::Block& b : batch->blocks) blocks.append(block_tuple(std::move(b)));
  py::dict typed;
  for (sampling::TypedInputs& in : batch->inputs)
    typed[py::int_(in.ntype)] = py::make_tuple(to_tensor(std::move(in.positions)), to_tensor(in.rows));
  const bool edges = !batch->edges.eids.empty(), pyg = !batch->pyg.nodes.empty();
  return py::make_tuple(to_tensor(std::move(batch->seeds)), blocks, optional_tensor(batch->features),
                        optional_tensor(batch->labels), typed,
                        edges ? py::object(edge_tuple(std::move(batch->edges))) : py::object(py::none()),
                        pyg ? py::object(pyg_tuple(std::move(batch->pyg))) : py::object(py::none()),
                        optional_tensor(batch->aggregated),
                        py::make_tuple(batch->sample_s, batch->fetch_s, batch->sample_cpu_s, batch->fetch_cpu_s));
}

// The options both Python loaders share; the rows to fetch are named later
// by set_fetch(), once the training loop has read them.
sampling::LoaderOptions loader_options(int64_t batch_size, bool shuffle, bool drop_last, int num_samplers,
                                       uint64_t seed) {
  sampling::LoaderOptions options;
  options.batch_size = batch_size;
  options.shuffle = shuffle;
  options.drop_last = drop_last;
  options.num_samplers = num_samplers;
  options.seed = seed;
  options.feature = options.label = "";
  return options;
}

// A Python callable that sampler threads may call: they take the GIL, which
// the trainer's thread releases whenever it waits or runs libtorch; the last
// owner drops it under the GIL too.
std::shared_ptr<py::object> shared_callable(py::object callable) {
  return std::shared_ptr<py::object>(new py::object(std::move(callable)), [](py::object* o) {
    py::gil_scoped_acquire acquire;
    delete o;
  });
}

// A loader over edge IDs (DistEdgeDataLoader; homogeneous IDs): negative_mode
// "", "per_source", "global" or "callback"; exclude "", "self", "reverse_id",
// "reverse_types" (reverse_etypes: edge type -> reverse type), "reverse" (every
// edge joining a pair's nodes, either way) or "callback". With pair_src and
// pair_dst (node pairs, PyG's edge_label_index; of edge type pair_etype on a
// typed graph), eids index those pairs.
std::unique_ptr<DistDataLoader> edge_loader(const DistNeighborSampler& sampler, const torch::Tensor& eids_in,
                                            int64_t batch_size, bool shuffle, bool drop_last, int num_samplers,
                                            uint64_t seed, const std::string& negative_mode, int64_t k,
                                            bool exclude_self_loops, bool replace, const std::string& exclude,
                                            const torch::Tensor& reverse_eids, std::map<int, int> reverse_etypes,
                                            py::object exclude_callback, py::object negative_callback,
                                            const torch::Tensor& pair_src, const torch::Tensor& pair_dst,
                                            int pair_etype) {
  distributed::Context& ctx = context();
  const torch::Tensor eids = id_tensor(eids_in, "edge IDs");
  auto edges = std::make_shared<sampling::EdgeBatchOptions>();
  using Mode = sampling::NegativeSampling::Mode;
  using Exclude = sampling::EdgeBatchOptions::Exclude;
  edges->negatives.mode = negative_mode.empty()         ? Mode::kNone
                          : negative_mode == "global"   ? Mode::kGlobal
                          : negative_mode == "callback" ? Mode::kCallback
                                                        : Mode::kPerSource;
  edges->negatives.k = k;
  edges->negatives.exclude_self_loops = exclude_self_loops;
  edges->negatives.replace = replace;
  edges->exclude = exclude.empty() ? Exclude::kNone
                   : exclude == "self" ? Exclude::kSelf
                   : exclude == "reverse_id" ? Exclude::kReverseId
                   : exclude == "reverse_types" ? Exclude::kReverseTypes
                   : exclude == "reverse" ? Exclude::kSelfAndReverse
                                                : Exclude::kCallback;
  edges->reverse_etypes = std::move(reverse_etypes);
  if (edges->exclude == Exclude::kReverseId) {
    const torch::Tensor r = id_tensor(reverse_eids, "reverse_eids");
    edges->reverse_eids.assign(r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel());
  }
  if (edges->exclude == Exclude::kCallback) {
    auto fn = shared_callable(std::move(exclude_callback));
    edges->exclude_callback = [fn](const std::vector<int64_t>& batch) {
      py::gil_scoped_acquire acquire;
      py::object out = (*fn)(to_tensor(std::vector<int64_t>(batch)));
      const torch::Tensor ids = id_tensor(out.cast<torch::Tensor>(), "the exclude function's edge IDs");
      return std::vector<int64_t>(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
    };
  }
  if (edges->negatives.mode == Mode::kCallback) {
    auto fn = shared_callable(std::move(negative_callback));
    edges->negatives.callback = [fn](const std::vector<int64_t>& batch, std::vector<int64_t>* src,
                                     std::vector<int64_t>* dst, std::vector<int64_t>* etypes) {
      py::gil_scoped_acquire acquire;
      py::object out = (*fn)(to_tensor(std::vector<int64_t>(batch)));
      if (!py::isinstance<py::tuple>(out) || (py::len(out) != 2 && py::len(out) != 3))
        throw ValueError("a negative sampler returns (sources, destinations)");
      const auto parts = out.cast<py::tuple>();
      const auto assign = [&](size_t i, const char* what, std::vector<int64_t>* ids) {
        const torch::Tensor t = id_tensor(parts[i].cast<torch::Tensor>(), what);
        ids->assign(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
      };
      assign(0, "the negative sampler's sources", src);
      assign(1, "the negative sampler's destinations", dst);
      // On a typed graph the Python side adds each pair's edge type.
      if (parts.size() == 3) assign(2, "the negative sampler's edge types", etypes);
    };
  }
  if (pair_src.numel() > 0 || pair_dst.numel() > 0) {  // node pairs to batch instead of edges
    const torch::Tensor s = checked_ids(pair_src, ctx.config().num_nodes, "the pairs' sources");
    const torch::Tensor d = checked_ids(pair_dst, ctx.config().num_nodes, "the pairs' destinations");
    if (s.numel() != d.numel())
      throw ValueError(fmt::format("{} pair sources but {} destinations", s.numel(), d.numel()));
    edges->pair_src.assign(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
    edges->pair_dst.assign(d.data_ptr<int64_t>(), d.data_ptr<int64_t>() + d.numel());
    edges->pair_etype = pair_etype;
  }
  sampling::LoaderOptions options = loader_options(batch_size, shuffle, drop_last, num_samplers, seed);
  options.edges = std::move(edges);
  return std::make_unique<DistDataLoader>(
      ctx, sampler, std::vector<int64_t>(eids.data_ptr<int64_t>(), eids.data_ptr<int64_t>() + eids.numel()), options);
}

}  // namespace

void bind_sampling(py::module_& m) {
  py::class_<DistNeighborSampler>(m, "NeighborSampler")
      .def(py::init([](std::vector<int64_t> fanouts, bool replace, bool per_etype, std::vector<std::string> weights) {
             sampling::SamplerOptions options;
             options.fanouts = std::move(fanouts);
             options.replace = replace;
             options.per_etype = per_etype;
             options.weights = std::move(weights);
             return std::make_unique<DistNeighborSampler>(context(), options);
           }),
           py::arg("fanouts"), py::arg("replace") = false, py::arg("per_etype") = false,
           py::arg("weights") = std::vector<std::string>())
      .def_property_readonly("num_layers", &DistNeighborSampler::num_layers);

  py::class_<DistDataLoader>(m, "DataLoader")
      .def(py::init([](const DistNeighborSampler& sampler, const torch::Tensor& seeds, int64_t batch_size,
                       bool shuffle, bool drop_last, int num_samplers, uint64_t seed, const std::string& seed_ntype,
                       std::map<std::string, std::string> typed_inputs, bool pyg_layout) {
             const torch::Tensor ids = id_tensor(seeds, "seed nodes");
             sampling::LoaderOptions options = loader_options(batch_size, shuffle, drop_last, num_samplers, seed);
             options.seed_ntype = seed_ntype;
             options.typed_inputs = std::move(typed_inputs);
             options.pyg_layout = pyg_layout;
             std::vector<int64_t> seed_vector(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
             return std::make_unique<DistDataLoader>(context(), sampler, std::move(seed_vector), options);
           }),
           py::arg("sampler"), py::arg("seeds"), py::arg("batch_size"), py::arg("shuffle"), py::arg("drop_last"),
           py::arg("num_samplers"), py::arg("seed"), py::arg("seed_ntype") = "",
           py::arg("typed_inputs") = std::map<std::string, std::string>{}, py::arg("pyg_layout") = false,
           py::keep_alive<1, 2>())
      .def_static("for_edges", &edge_loader, py::arg("sampler"), py::arg("eids"), py::arg("batch_size"),
                  py::arg("shuffle"), py::arg("drop_last"), py::arg("num_samplers"), py::arg("seed"),
                  py::arg("negative_mode"), py::arg("k"), py::arg("exclude_self_loops"), py::arg("replace"),
                  py::arg("exclude"), py::arg("reverse_eids"), py::arg("reverse_etypes"), py::arg("exclude_callback"),
                  py::arg("negative_callback"), py::arg("pair_src"), py::arg("pair_dst"), py::arg("pair_etype"),
                  py::keep_alive<0, 1>())
      .def_property_readonly("batches_per_epoch", &DistDataLoader::batches_per_epoch)
      .def("start_epoch", [](DistDataLoader& l, int epoch) {
        py::gil_scoped_release release;
        l.start_epoch(epoch);
      })
      .def("set_fetch", &DistDataLoader::set_fetch, py::arg("feature"), py::arg("label"))
      .def("set_typed_fetch", &DistDataLoader::set_typed_fetch, py::arg("inputs"), py::arg("label"))
      // "" stops it; else "sum", "mean" or "gcn".
      .def("set_input_aggregation", [](DistDataLoader& l, const std::string& reduce) {
        l.set_input_aggregation(reduce.empty() ? std::nullopt
                                               : std::optional(parse_reduce("set_input_aggregation", reduce)));
      }, py::arg("reduce"))
      .def("add_feature_cache",
           [](DistDataLoader& l, std::shared_ptr<distributed::RemoteRowCache> cache) { l.add_feature_cache(cache); },
           py::arg("cache"))
      .def("stop", [](DistDataLoader& l) {
        py::gil_scoped_release release;
        l.stop();
      })
      .def("next", &next_batch);

  // The PyG layout of blocks given as tuples (block_tuple's form), for loaders that build their blocks
  // before laying them out (the edge loader).
  m.def("pyg_layout", [](const std::vector<py::tuple>& layers) {
    std::vector<sampling::Block> blocks;
    for (const py::tuple& t : layers) {
      sampling::Block b;
      b.num_dst = t[0].cast<int64_t>();
      for (auto [k, v] : {std::pair{1, &b.src_nodes}, {2, &b.indptr}, {3, &b.indices}, {4, &b.eids}}) {
        const torch::Tensor x = id_tensor(t[k].cast<torch::Tensor>(), "block arrays");
        v->assign(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
      }
      if (!t[5].is_none()) {
        const torch::Tensor x = t[5].cast<torch::Tensor>().to(torch::kInt32).contiguous();
        b.etypes.assign(x.data_ptr<int32_t>(), x.data_ptr<int32_t>() + x.numel());
      }
      blocks.push_back(std::move(b));
    }
    sampling::PygSubgraph out;
    {
      py::gil_scoped_release release;
      out = sampling::pyg_layout(blocks);
    }
    return pyg_tuple(std::move(out));
  });
}

}  // namespace tessera::python
