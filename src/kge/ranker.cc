#include "ranker.h"

#include <algorithm>

#include "base/progress.h"
#include "tessera/kge/knowledge_graph.h"
#include "tessera/base/random.h"

namespace tessera::kge {

void RankSums::add(int64_t r) {
  rank += static_cast<double>(r);
  reciprocal += 1.0 / static_cast<double>(r);
  hits1 += r <= 1;
  hits3 += r <= 3;
  hits10 += r <= 10;
  count += 1;
}

void RankSums::add(const RankSums& o) {
  const auto a = as_array(), b = o.as_array();
  std::array<double, 6> c;
  for (size_t i = 0; i < c.size(); ++i) c[i] = a[i] + b[i];
  *this = from_array(c);
}

RankSums RankSums::from_array(const std::array<double, 6>& a) { return {a[0], a[1], a[2], a[3], a[4], a[5]}; }

KnownTriples::KnownTriples(const std::vector<const Array*>& sets) {
  for (const Array* s : sets)
    for (int64_t i = 0; i < s->rows(); ++i) {
      const int64_t* t = triple(*s, i);
      by_head_.push_back({t[0], t[1], t[2]});
      by_tail_.push_back({t[2], t[1], t[0]});
    }
  std::sort(by_head_.begin(), by_head_.end());
  std::sort(by_tail_.begin(), by_tail_.end());
}

bool KnownTriples::contains(bool head_query, int64_t anchor, int64_t relation, int64_t entity) const {
  const std::vector<Key>& keys = head_query ? by_tail_ : by_head_;
  return std::binary_search(keys.begin(), keys.end(), Key{anchor, relation, entity});
}

namespace {

constexpr int64_t kScoreBudget = int64_t{1} << 24;  // elements one scoring call may materialise

// Ranks one direction for queries [begin, end): the true entity is the
// tail (head_query false) or the head, `anchor` the other end.
void rank_direction(const Array& triples, int64_t begin, int64_t end, bool head_query, const torch::Tensor& entities,
                    const torch::Tensor& relations, const ScoreFunction& score, const KnownTriples* known,
                    const RankOptions& o, RankSums* sums, Progress* bar) {
  const int64_t num_entities = entities.size(0);
  const bool sampled = o.neg_sample_size_eval > 0;
  const bool by_degree = sampled && o.degree_triples != nullptr && o.degree_triples->rows() > 0;
  const int64_t candidates = sampled ? o.neg_sample_size_eval * (by_degree ? 2 : 1) : num_entities;
  const int64_t per_pair = score.negative_pair_elements();
  const int64_t chunk = sampled ? std::max<int64_t>(1, o.batch_size_eval)
                                : std::clamp<int64_t>(kScoreBudget / (candidates * per_pair), 1, 1024);
  Rng rng(o.seed, head_query ? 1 : 2);
  // With inverse relations a head query scores as a tail query.
  const bool scored_as_head = head_query && o.inverse_relations == 0;
  std::vector<int64_t> anchor_ids, relation_ids, relation_rows, true_ids, candidate_ids(candidates);
  for (int64_t first = begin; first < end; first += chunk) {
    const int64_t k = std::min(end, first + chunk) - first;
    anchor_ids.resize(k);
    relation_ids.resize(k);
    relation_rows.resize(k);
    true_ids.resize(k);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t* t = triple(triples, first + i);
      anchor_ids[i] = head_query ? t[2] : t[0];
      relation_ids[i] = t[1];
      true_ids[i] = head_query ? t[0] : t[2];
      relation_rows[i] = t[1] + (head_query ? o.inverse_relations : 0);
    }
    auto ids = [](std::vector<int64_t>& v) { return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kInt64); };
    const torch::Tensor anchor = entities.index_select(0, ids(anchor_ids)).unsqueeze(0);
    const torch::Tensor rel = relations.index_select(0, ids(relation_rows)).unsqueeze(0);
    torch::Tensor cands = entities;
    if (sampled) {
      for (int64_t m = 0; m < candidates; ++m) {
        if (by_degree && m >= o.neg_sample_size_eval) {
          const int64_t* t = triple(*o.degree_triples, static_cast<int64_t>(rng.below(o.degree_triples->rows())));
          candidate_ids[m] = t[rng.below(2) * 2];  // the head or the tail
        } else {
          candidate_ids[m] = static_cast<int64_t>(rng.below(num_entities));
        }
      }
      cands = entities.index_select(0, ids(candidate_ids));
    }
    const torch::Tensor scores = score.negative(anchor, rel, cands.unsqueeze(0), scored_as_head).squeeze(0).contiguous();
    torch::Tensor truth;
    if (sampled) {
      const torch::Tensor te = entities.index_select(0, ids(true_ids));
      const torch::Tensor h = scored_as_head ? te : anchor.squeeze(0), t = scored_as_head ? anchor.squeeze(0) : te;
      truth = score.positive(h, rel.squeeze(0), t).contiguous();
    } else {
      truth = scores.gather(1, ids(true_ids).unsqueeze(1)).squeeze(1).contiguous();  // the same arithmetic
    }
    const float* s = scores.data_ptr<float>();
    const float* p = truth.data_ptr<float>();
    std::vector<int64_t> ranks(k);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t i = 0; i < k; ++i) {
      int64_t better = 0;
      for (int64_t m = 0; m < candidates; ++m) {
        if (s[i * candidates + m] < p[i]) continue;
        const int64_t e = sampled ? candidate_ids[m] : m;
        if (e == true_ids[i]) continue;
        if (known != nullptr && known->contains(head_query, anchor_ids[i], relation_ids[i], e)) continue;
        ++better;
      }
      ranks[i] = 1 + better;
    }
    for (int64_t r : ranks) sums->add(r);
    bar->add(k);
  }
}

}  // namespace

RankSums rank_triples(const Array& triples, int64_t begin, int64_t end, const torch::Tensor& entities,
                      const torch::Tensor& relations, const ScoreFunction& score, const KnownTriples* known,
                      const RankOptions& options) {
  torch::NoGradGuard no_grad;
  RankSums sums;
  const KnownTriples* filter = options.filtered ? known : nullptr;
  Progress bar("ranking", 2 * (end - begin), stdout, options.progress);
  for (bool head_query : {false, true})
    rank_direction(triples, begin, end, head_query, entities, relations, score, filter, options, &sums, &bar);
  return sums;
}

}  // namespace tessera::kge
