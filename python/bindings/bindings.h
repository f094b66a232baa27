// The extension tessera._C: one binding file per part of the C++ library (distributed, partition book, sampling,
// graph services, nn), as
// Marius's bindings are laid out. The Python layer above it is thin: it converts arguments, releases the GIL
// around pulls, pushes and sampling, and hands tensors across without copies.
#pragma once

#include <pybind11/pybind11.h>

#include "tessera/distributed/context.h"

namespace tessera::python {

namespace py = pybind11;

// This process's Context (one per process, made by initialize()); raises
// RuntimeError naming initialize() when there is none.
distributed::Context& context();

void bind_distributed(py::module_& m);
void bind_sampling(py::module_& m);
void bind_graph(py::module_& m);
void bind_nn(py::module_& m);
void bind_partition_book(py::module_& m);
// torch.distributed's backend "tessera" (process_group.cc).
void bind_process_group(py::module_& m);

}  // namespace tessera::python
