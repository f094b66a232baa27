// Bindings of the nn part: the CSR aggregation kernels and the fused SAGEConv layer, with their autograd, for
// tessera.nn's layers.
#include "bindings.h"
#include "convert.h"
#include "tessera/nn/csr_aggregate.h"
#include "tessera/nn/fused_sage_conv.h"
#include "tessera/nn/sage.h"

namespace tessera::python {
namespace {

nn::CsrReduce parse_reduce(const char* op, const std::string& reduce) {
  if (reduce == "sum") return nn::CsrReduce::kSum;
  if (reduce == "mean") return nn::CsrReduce::kMean;
  if (reduce == "gcn") return nn::CsrReduce::kGcnMean;
  throw ValueError(std::string(op) + ": reduce must be sum, mean or gcn, not " + reduce);
}

torch::Tensor tensor_or_undefined(const py::object& t) { return t.is_none() ? torch::Tensor() : t.cast<torch::Tensor>(); }

}  // namespace

void bind_nn(py::module_& m) {
  m.def("csr_aggregate", [](const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                            const std::string& reduce) {
    const nn::CsrReduce r = parse_reduce("csr_aggregate", reduce);
    py::gil_scoped_release release;
    return nn::csr_aggregate(x, indptr, indices, r);
  }, py::arg("x"), py::arg("indptr"), py::arg("indices"), py::arg("reduce"));
  // One SAGEConv layer (mean or gcn) as one autograd node; w_self and bias may be None.
  m.def("sage_conv", [](const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                        int64_t num_dst, const py::object& w_self, const torch::Tensor& w_neigh,
                        const py::object& bias, const std::string& reduce, bool linear_first) {
    const nn::CsrReduce r = parse_reduce("sage_conv", reduce);
    const torch::Tensor ws = tensor_or_undefined(w_self), b = tensor_or_undefined(bias);
    py::gil_scoped_release release;
    return nn::fused_sage_conv(x, indptr, indices, num_dst, ws, w_neigh, b, r, linear_first);
  }, py::arg("x"), py::arg("indptr"), py::arg("indices"), py::arg("num_dst"), py::arg("w_self"), py::arg("w_neigh"),
        py::arg("bias"), py::arg("reduce"), py::arg("linear_first"));
  // Whether projecting before aggregating moves fewer bytes (the C++ SageConv's cost model).
  m.def("linear_first_is_cheaper", &nn::linear_first_is_cheaper, py::arg("num_src"), py::arg("num_dst"),
        py::arg("nnz"), py::arg("in_feats"), py::arg("out_feats"), py::arg("x_grad"), py::arg("w_grad"));
}

}  // namespace tessera::python
