#include "tessera/version.h"

namespace tessera {

const char* version() { return TESSERA_VERSION_STRING; }

const char* torch_version() { return TESSERA_TORCH_VERSION_STRING; }

}  // namespace tessera
