// KvsAll's training examples (LibKGE's KvsAll, ConvE's 1-N scoring): each
// distinct (head, relation) of the training triples is one query whose
// answers are all its known tails, and each distinct (relation, tail) one
// whose answers are all its known heads. An epoch visits every query once,
// so it costs the number of distinct pairs, not twice the triples as
// 1vsAll's does.
//
// The queries are rows of an int64 [queries x 3] array (anchor, relation
// row, query id), the shape sampling::TripleSampler shuffles and batches,
// so KvsAll reuses its epochs and seeding unchanged; the query id finds the
// answers. With `reciprocal` a head query asks for the tail of the inverse
// relation's row (relation + num_relations); without, it uses the relation's
// own row and `as_head` says so.
//
// Private header (src/kge).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/base/array.h"

namespace tessera::kge {

struct KvsAllQueries {
  Array queries;                 // int64 [size() x 3]: anchor, relation row, query id (= the row's index)
  std::vector<int64_t> offsets;  // size() + 1: query q's answers are answers[offsets[q], offsets[q + 1])
  std::vector<int64_t> answers;  // ascending within each query, each once
  std::vector<char> as_head;     // query q asks for heads through its relation's own row
  int64_t tail_queries = 0;      // queries [0, tail_queries) ask for tails of (head, relation)

  int64_t size() const { return static_cast<int64_t>(as_head.size()); }
  int64_t num_answers(int64_t q) const { return offsets[q + 1] - offsets[q]; }
  const int64_t* answers_of(int64_t q) const { return answers.data() + offsets[q]; }
};

// The queries of `triples` (int64 [n x 3], head, relation, tail; n >= 1), in
// order: tail queries sorted by (head, relation), then head queries by
// (tail, relation). Duplicate triples count once.
KvsAllQueries kvsall_queries(const Array& triples, int64_t num_relations, bool reciprocal);

}  // namespace tessera::kge
