#include "kvsall_queries.h"

#include <algorithm>
#include <array>

#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

// Appends one query per distinct (anchor, relation) of `pairs`, sorted, with
// its distinct answers.
void add_queries(std::vector<std::array<int64_t, 3>>* pairs, int64_t relation_offset, bool as_head,
                 std::vector<std::array<int64_t, 2>>* rows, KvsAllQueries* out) {
  std::sort(pairs->begin(), pairs->end());
  pairs->erase(std::unique(pairs->begin(), pairs->end()), pairs->end());
  for (size_t i = 0; i < pairs->size();) {
    const int64_t anchor = (*pairs)[i][0], relation = (*pairs)[i][1];
    rows->push_back({anchor, relation + relation_offset});
    for (; i < pairs->size() && (*pairs)[i][0] == anchor && (*pairs)[i][1] == relation; ++i)
      out->answers.push_back((*pairs)[i][2]);
    out->offsets.push_back(static_cast<int64_t>(out->answers.size()));
    out->as_head.push_back(as_head);
  }
}

}  // namespace

KvsAllQueries kvsall_queries(const Array& triples, int64_t num_relations, bool reciprocal) {
  if (triples.ndim() != 2 || triples.shape()[1] != 3 || triples.rows() < 1)
    fail("KvsAll: training triples must be a non-empty [n x 3] array, got {} rows", triples.rows());
  const int64_t n = triples.rows();
  const int64_t* t = triples.data<int64_t>();
  KvsAllQueries q;
  q.offsets.push_back(0);
  std::vector<std::array<int64_t, 2>> rows;
  std::vector<std::array<int64_t, 3>> pairs(n);
  for (int64_t i = 0; i < n; ++i) pairs[i] = {t[3 * i], t[3 * i + 1], t[3 * i + 2]};
  add_queries(&pairs, 0, false, &rows, &q);
  q.tail_queries = q.size();
  pairs.resize(n);  // the first pass dropped its duplicates
  for (int64_t i = 0; i < n; ++i) pairs[i] = {t[3 * i + 2], t[3 * i + 1], t[3 * i]};
  add_queries(&pairs, reciprocal ? num_relations : 0, !reciprocal, &rows, &q);
  q.queries = Array::uninitialized(DType::kInt64, {q.size(), 3});
  int64_t* out = q.queries.data<int64_t>();
  for (int64_t i = 0; i < q.size(); ++i) {
    out[3 * i] = rows[i][0];
    out[3 * i + 1] = rows[i][1];
    out[3 * i + 2] = i;
  }
  return q;
}

}  // namespace tessera::kge
