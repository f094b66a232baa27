// Bindings of the nn part: the CSR aggregation kernels, with their autograd, for tessera.nn's layers.
#include "bindings.h"
#include "convert.h"
#include "tessera/nn/csr_aggregate.h"
#include "tessera/nn/sage.h"

namespace tessera::python {

void bind_nn(py::module_& m) {
  m.def("csr_aggregate", [](const torch::Tensor& x, const torch::Tensor& indptr, const torch::Tensor& indices,
                            const std::string& reduce) {
    nn::CsrReduce r;
    if (reduce == "sum") r = nn::CsrReduce::kSum;
    else if (reduce == "mean") r = nn::CsrReduce::kMean;
    else if (reduce == "gcn") r = nn::CsrReduce::kGcnMean;
    else throw ValueError("csr_aggregate: reduce must be sum, mean or gcn, not " + reduce);
    py::gil_scoped_release release;
    return nn::csr_aggregate(x, indptr, indices, r);
  }, py::arg("x"), py::arg("indptr"), py::arg("indices"), py::arg("reduce"));
  // Whether projecting before aggregating moves fewer bytes (the C++ SageConv's cost model).
  m.def("linear_first_is_cheaper", &nn::linear_first_is_cheaper, py::arg("num_src"), py::arg("num_dst"),
        py::arg("nnz"), py::arg("in_feats"), py::arg("out_feats"), py::arg("x_grad"), py::arg("w_grad"));
}

}  // namespace tessera::python
