// Held-out edges for link prediction: a validation and a test set of node
// pairs taken out of the training graph before it is partitioned, so no
// trainer can sample the edges it is evaluated on, and written into the
// partition in the partition's node IDs, so every machine ranks the same ones.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/partition/partition.h"

namespace tessera {
namespace {

// Rows `keep` of `a` (in order), any dtype and row shape.
Array keep_rows(const Array& a, const std::vector<int64_t>& keep) {
  std::vector<int64_t> shape = a.shape();
  shape[0] = static_cast<int64_t>(keep.size());
  Array out = Array::uninitialized(a.dtype(), shape);
  const size_t rb = a.row_bytes();
  const char* src = static_cast<const char*>(a.raw());
  char* dst = static_cast<char*>(out.mutable_raw());
  for (size_t i = 0; i < keep.size(); ++i) std::memcpy(dst + i * rb, src + keep[i] * rb, rb);
  return out;
}

int64_t held_out_count(double amount, int64_t pairs, const char* flag) {
  if (!(amount >= 0)) fail("{} {}: give a fraction below 1 or a count of edges, not a negative", flag, amount);
  if (amount < 1) return static_cast<int64_t>(amount * static_cast<double>(pairs));
  if (amount != static_cast<double>(static_cast<int64_t>(amount)))
    fail("{} {}: a count of edges must be whole (or give a fraction below 1)", flag, amount);
  return static_cast<int64_t>(amount);
}

}  // namespace

void hold_out_edges(Dataset* d, double valid, double test, uint64_t seed) {
  if (valid == 0 && test == 0) return;
  if (d->edge_types.size() != 1 || d->node_types.size() != 1)
    fail("--valid-edges / --test-edges hold out edges of a graph with one node and one edge type; this one has {} "
         "and {}", d->node_types.size(), d->edge_types.size());
  EdgeType& et = d->edge_types[0];
  const int64_t m = et.count();
  const int64_t* src = et.src.data<int64_t>();
  const int64_t* dst = et.dst.data<int64_t>();
  // Edges by unordered pair: a held-out pair leaves in both directions.
  std::unordered_map<uint64_t, std::vector<int64_t>> by_pair;
  const uint64_t n = static_cast<uint64_t>(d->num_nodes());
  auto pair_key = [n](int64_t u, int64_t v) {
    return static_cast<uint64_t>(std::min(u, v)) * n + static_cast<uint64_t>(std::max(u, v));
  };
  for (int64_t e = 0; e < m; ++e)
    if (src[e] != dst[e]) by_pair[pair_key(src[e], dst[e])].push_back(e);
  const auto pairs = static_cast<int64_t>(by_pair.size());
  const int64_t num_valid = held_out_count(valid, pairs, "--valid-edges");
  const int64_t num_test = held_out_count(test, pairs, "--test-edges");
  if (num_valid + num_test >= pairs)
    fail("--valid-edges / --test-edges: {} + {} held-out edges leave none of the graph's {} connected node pairs to "
         "train on", num_valid, num_test, pairs);

  std::vector<int64_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed, 0x686f6c64);  // "hold"
  for (int64_t i = m; i > 1; --i) std::swap(order[i - 1], order[rng.below(static_cast<uint64_t>(i))]);
  std::vector<char> removed(m, 0);
  std::vector<int64_t> chosen[2];
  int64_t want[2] = {num_valid, num_test};
  int which = 0;
  for (const int64_t e : order) {
    while (which < 2 && static_cast<int64_t>(chosen[which].size()) / 2 >= want[which]) ++which;
    if (which == 2) break;
    if (removed[e] || src[e] == dst[e]) continue;
    for (const int64_t twin : by_pair[pair_key(src[e], dst[e])]) removed[twin] = 1;
    chosen[which].push_back(src[e]);
    chosen[which].push_back(dst[e]);
  }
  const char* names[2] = {"valid", "test"};
  for (int k = 0; k < 2; ++k) {
    if (want[k] == 0) continue;
    Array pairs_array = Array::from_vector(chosen[k]);
    d->held_out_edges[names[k]] =
        Array::wrap(DType::kInt64, {static_cast<int64_t>(chosen[k].size() / 2), 2}, pairs_array.raw(),
                    std::make_shared<Array>(pairs_array));
  }
  std::vector<int64_t> keep;
  for (int64_t e = 0; e < m; ++e)
    if (!removed[e]) keep.push_back(e);
  et.src = keep_rows(et.src, keep);
  et.dst = keep_rows(et.dst, keep);
  for (auto& [name, a] : et.data) a = keep_rows(a, keep);
}

}  // namespace tessera
