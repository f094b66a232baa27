// tessera._C: the extension module. Tessera's errors become Python exceptions carrying Tessera's message:
// a dead or silent server ConnectionError, bad arguments TypeError / ValueError / IndexError (raised by the
// bindings before anything is sent), anything else RuntimeError (libtorch's without its C++ backtrace). No crash.
#include <torch/extension.h>

#include "bindings.h"
#include "convert.h"
#include "tessera/base/error.h"
#include "tessera/version.h"

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  using namespace tessera::python;
  m.doc() = "Tessera's C++ core: the objects tessera.distributed, tessera.dataloading and tessera.nn wrap";
  m.attr("__version__") = tessera::version();
  m.attr("__torch_version__") = tessera::torch_version();  // the libtorch it was built against
  m.attr("__kernel_level__") = tessera::kernel_level();    // the build of the kernels glibc loaded
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tessera::PeerError& e) {
      PyErr_SetString(PyExc_ConnectionError, e.what());
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const py::error_already_set&) {
      throw;  // a Python exception on its way back: pybind11 restores it
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const std::exception& e) {
      // libtorch's errors without their C++ backtrace (TESSERA_DEBUG=1 keeps it)
      PyErr_SetString(PyExc_RuntimeError, tessera::describe(e).c_str());
    }
  });
  bind_distributed(m);
  bind_sampling(m);
  bind_graph(m);
  bind_nn(m);
  bind_partition_book(m);
  bind_process_group(m);
}
