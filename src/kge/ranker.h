// Link-prediction evaluation as DGL-KE reports it: every triple is ranked
// twice, its tail against candidate tails and its head against candidate
// heads; MR, MRR and Hits@1/3/10 average over both. Candidates are all
// entities (--neg_sample_size_eval -1) or a uniform sample shared by a chunk
// of queries (doubled with a degree-proportional one: --neg_deg_sample_eval). Filtered (the default) leaves out every candidate that makes a
// known triple (train, valid or test), exactly: the rank is
// 1 + #{candidates, not known, scoring at least the true triple}.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <vector>

#include "nn/kge/score_function.h"
#include "tessera/base/array.h"

namespace tessera::kge {

// Sums over ranked queries; add() merges, metrics divide by count.
struct RankSums {
  double rank = 0, reciprocal = 0, hits1 = 0, hits3 = 0, hits10 = 0, count = 0;
  void add(int64_t rank);
  void add(const RankSums& o);
  std::array<double, 6> as_array() const { return {rank, reciprocal, hits1, hits3, hits10, count}; }
  static RankSums from_array(const std::array<double, 6>& a);
};

// Every known triple, sorted twice, so the known tails of (h, r) and the
// known heads of (r, t) are each one contiguous run.
class KnownTriples {
 public:
  explicit KnownTriples(const std::vector<const Array*>& triple_sets);
  // Whether `entity` completes the query (anchor, relation) as a known
  // triple: as tail of (anchor, relation, ?) or as head of (?, relation, anchor).
  bool contains(bool head_query, int64_t anchor, int64_t relation, int64_t entity) const;

 private:
  using Key = std::array<int64_t, 3>;
  std::vector<Key> by_head_, by_tail_;  // (h, r, t) and (t, r, h), sorted
};

struct RankOptions {
  bool filtered = true;
  int64_t neg_sample_size_eval = -1;  // -1: every entity is a candidate
  int64_t batch_size_eval = 8;        // sampled mode: queries sharing one candidate set
  // Sampled mode, --neg_deg_sample_eval: as many candidates again, each an
  // end of a random one of these triples (so in proportion to degree).
  const Array* degree_triples = nullptr;
  uint64_t seed = 0;
  bool progress = false;              // a bar of the queries ranked, on a terminal (base/progress.h)
  // --reciprocal: the inverse of relation r is row r + this of the relation
  // table, and a head is ranked as the tail of (t, inverse of r, ?). 0: none.
  int64_t inverse_relations = 0;
};

// Ranks triples [begin, end) of `triples` (int64 [n, 3]) with the trained
// tables (entity and relation rows by ID).
RankSums rank_triples(const Array& triples, int64_t begin, int64_t end, const torch::Tensor& entities,
                      const torch::Tensor& relations, const ScoreFunction& score, const KnownTriples* known,
                      const RankOptions& options);

}  // namespace tessera::kge
