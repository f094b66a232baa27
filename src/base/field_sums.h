// Adding one record of counters into another, field by field, with the fields named once: a record's .cc lists
// them in a template that ties them (std::tie(t.a, t.b, ...)) for a record and for a const one, and its add()
// is add_fields(fields(*this), fields(other)). PhaseTimes (train/phase_times.cc) and kge::StepTimes
// (kge/kge_step.cc) sum this way.
#pragma once

#include <tuple>

namespace tessera {

// into's i-th field += from's i-th field, for each field; both are tuples
// of references of the same length (std::tie of two records' fields).
template <class Into, class From>
void add_fields(Into into, const From& from) {
  std::apply([&](auto&... a) { std::apply([&](const auto&... b) { ((a += b), ...); }, from); }, into);
}

}  // namespace tessera
