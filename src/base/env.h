#pragma once
// Reading the environment.

#include <cstdlib>

namespace tessera {

// The value of environment variable `name`, or nullptr when it is unset or
// empty: an empty variable is treated as unset everywhere, since launchers and
// job schedulers export empty ones for roles they do not use.
inline const char* env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace tessera
