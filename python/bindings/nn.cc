// Bindings of the nn part: the CSR aggregation kernels, the fused SAGEConv layer and dropout, with their
// autograd, for tessera.nn's layers.
#include "bindings.h"
#include "convert.h"
#include "tessera/nn/csr_aggregate.h"
#include "tessera/nn/fused_sage_conv.h"
#include "tessera/nn/relu_dropout.h"
#include "tessera/nn/sage.h"

namespace tessera::python {
namespace {

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
  // The same layer on a loader's aggregation of the input rows (x_dst None for gcn).
  // relu: the layer's activation is ReLU, applied in the layer's own node.
  m.def("sage_conv_aggregated", [](const py::object& x_dst, const torch::Tensor& aggregated, const py::object& w_self,
                                   const torch::Tensor& w_neigh, const py::object& bias, bool relu) {
    const torch::Tensor xd = tensor_or_undefined(x_dst), ws = tensor_or_undefined(w_self), b = tensor_or_undefined(bias);
    py::gil_scoped_release release;
    return nn::fused_sage_conv_aggregated(xd, aggregated, ws, w_neigh, b,
                                          relu ? std::optional(nn::ReluDropout{0.0, false}) : std::nullopt);
  }, py::arg("x_dst"), py::arg("aggregated"), py::arg("w_self"), py::arg("w_neigh"), py::arg("bias"),
        py::arg("relu") = false);
  // Dropout by a counter-based generator seeded from torch's (relu_dropout's draws): ~60x cheaper than
  // torch's bernoulli_ mask on a hidden layer (17 us against 1.1 ms at 5,530 x 16).
  m.def("dropout", [](const torch::Tensor& x, double p, bool training) {
    py::gil_scoped_release release;
    return nn::elementwise_dropout(x, p, training);
  }, py::arg("x"), py::arg("p"), py::arg("training"));
  // Whether projecting before aggregating moves fewer bytes (the C++ SageConv's cost model).
  m.def("linear_first_is_cheaper", &nn::linear_first_is_cheaper, py::arg("num_src"), py::arg("num_dst"),
        py::arg("nnz"), py::arg("in_feats"), py::arg("out_feats"), py::arg("x_grad"), py::arg("w_grad"));
}

}  // namespace tessera::python
