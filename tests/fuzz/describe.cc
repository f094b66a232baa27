// describe() for the fuzz build, which links no libtorch: base/error.cc's
// version also unwraps c10::Error, which no decoder or service here throws.
#include "tessera/base/error.h"

namespace tessera {

std::string describe(const std::exception& e) { return e.what(); }

}  // namespace tessera
