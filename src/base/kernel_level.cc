// Compiled into each build of libtessera_kernels.so (cmake/kernels.cmake), so
// it names the build glibc loaded, not the one libtessera.so was linked with.
#include "tessera/version.h"

namespace tessera {

const char* kernel_level() { return TESSERA_KERNEL_LEVEL; }

}  // namespace tessera
