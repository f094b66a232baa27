// Walks the IDs [begin, end) of a space in bounded chunks, so whole-table
// operations (save, load, scanning a mask) never hold one huge ID list.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace tessera::distributed {

constexpr int64_t kIdChunk = 1 << 18;

// Calls fn(first, ids) with ids = first, first+1, ... for each chunk.
template <typename Fn>
void for_each_id_chunk(int64_t begin, int64_t end, Fn&& fn) {
  std::vector<int64_t> ids;
  for (int64_t first = begin; first < end; first += kIdChunk) {
    ids.resize(std::min(end, first + kIdChunk) - first);
    std::iota(ids.begin(), ids.end(), first);
    fn(first, ids);
  }
}

}  // namespace tessera::distributed
