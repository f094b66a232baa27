// Fanouts: how many in-edges to draw per layer, input layer first (DGL's
// order), -1 meaning every in-edge; one value may stand for every layer.
// A typed value: command lines parse "10,25" into it once (src/tools), and
// programs, the Python package and the trainers pass it on as it is.
//
// Errors are tessera::Error naming the flag the value came from.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace tessera::sampling {

struct Fanouts {
  Fanouts() = default;
  Fanouts(std::initializer_list<int64_t> per_layer) : values(per_layer) {}
  explicit Fanouts(std::vector<int64_t> per_layer) : values(std::move(per_layer)) {}

  // The fanouts of `layers` layers: the one value repeated, or exactly
  // `layers` values; otherwise an error naming `flag`.
  std::vector<int64_t> for_layers(int layers, const char* flag) const;
  bool empty() const { return values.empty(); }
  std::string to_string() const;  // "10,25", as the flag was written

  std::vector<int64_t> values;  // each >= -1
  bool operator==(const Fanouts& o) const { return values == o.values; }
};

}  // namespace tessera::sampling
