#include "tessera/sampling/fanouts.h"

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::sampling {

std::vector<int64_t> Fanouts::for_layers(int layers, const char* flag) const {
  for (int64_t v : values)
    if (v < -1) fail("{} '{}': {} is not a fanout (a count >= 0, or -1 for all neighbours)", flag, to_string(), v);
  if (values.size() == 1) return std::vector<int64_t>(layers, values[0]);
  if (static_cast<int>(values.size()) != layers)
    fail("{} '{}' gives {} fanouts for {} layers", flag, to_string(), values.size(), layers);
  return values;
}

std::string Fanouts::to_string() const { return fmt::format("{}", fmt::join(values, ",")); }

}  // namespace tessera::sampling
