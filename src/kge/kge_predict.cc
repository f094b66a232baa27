// `tessera kge predict` (dglke_predict): the best-scoring triples among those
// the given lists make, by the trained model.
#include <filesystem>

#include <fmt/format.h>
#include <torch/torch.h>

#include "infer_common.h"
#include "kge_files.h"
#include "nn/kge/score_function.h"
#include "tessera/base/error.h"
#include "tessera/base/threads.h"
#include "tessera/base/timer.h"
#include "tessera/kge/kge_infer.h"

namespace tessera::kge {
namespace fs = std::filesystem;
namespace {

// The trained model, ready to score: tables and score function.
struct TrainedModel {
  std::unique_ptr<ScoreFunction> score;
  SavedTables tables;
  bool logsigmoid = false;
  int64_t num_entities() const { return tables.entities.size(0); }
  int64_t num_relations() const { return tables.relations.size(0); }
};

TrainedModel load_model(const PredictOptions& p) {
  KgeOptions base;
  base.save_path = p.model_path;
  const KgeOptions o = options_from_config(p.model_path, base);
  TrainedModel m;
  m.logsigmoid = p.score_func == "logsigmoid";
  // DGL-KE scores with gamma 0 for "none", and the trained gamma under logsigmoid (scores nearer 0).
  m.score = make_score_function({parse_model(o.model_name), o.hidden_dim, m.logsigmoid ? o.gamma : 0.0, o.double_ent,
                                 o.double_rel});
  m.tables = load_embeddings(o, m.score->entity_dim(), m.score->relation_dim());
  // A triple scores through its relation's own row, as LibKGE's reciprocal
  // model scores (s, p, o); the inverse rows only rank heads in evaluation.
  if (o.reciprocal) m.tables.relations = m.tables.relations.narrow(0, 0, m.tables.relations.size(0) / 2);
  return m;
}

torch::Tensor finish(const TrainedModel& m, torch::Tensor raw) {
  return m.logsigmoid ? torch::nn::functional::logsigmoid(raw) : raw;
}

// Every (anchor_i, rel_i) pair against every candidate, in blocks: the anchor
// is the head and candidates tails, or (corrupt_head) the anchor is the tail
// and candidates heads. Offers (head, rel, tail) rows to `best`.
void score_pairs(const TrainedModel& m, const torch::Tensor& anchors, const torch::Tensor& rels,
                 const torch::Tensor& candidates, bool corrupt_head, BestK* best) {
  const int64_t pairs = anchors.size(0), n = candidates.size(0);
  const torch::Tensor cand = m.tables.entities.index_select(0, candidates).unsqueeze(0);
  const int64_t block = std::max<int64_t>(1, kInferBlockElements / (n * m.score->negative_pair_elements()));
  for (int64_t from = 0; from < pairs; from += block) {
    const int64_t len = std::min(block, pairs - from);
    const torch::Tensor a = anchors.narrow(0, from, len), r = rels.narrow(0, from, len);
    const torch::Tensor scores =
        finish(m, m.score->negative(m.tables.entities.index_select(0, a).unsqueeze(0),
                                    m.tables.relations.index_select(0, r).unsqueeze(0), cand, corrupt_head)[0])
            .reshape({-1});
    best->offer(scores, scores, [&](const torch::Tensor& at) {
      const torch::Tensor pair = at.div(n, "floor"), cand_at = at.remainder(n);
      const torch::Tensor anchor_col = a.index_select(0, pair), rel_col = r.index_select(0, pair);
      const torch::Tensor cand_col = candidates.index_select(0, cand_at);
      return corrupt_head ? torch::stack({cand_col, rel_col, anchor_col}, 1)
                          : torch::stack({anchor_col, rel_col, cand_col}, 1);
    });
  }
}

// Every combination of the three lists: (head, rel) pairs against the tails,
// or (tail, rel) pairs against the heads when there are fewer tails.
void score_all(const TrainedModel& m, const torch::Tensor& h, const torch::Tensor& r, const torch::Tensor& t, BestK* best) {
  const bool corrupt_head = t.size(0) < h.size(0);
  const torch::Tensor& anchor = corrupt_head ? t : h;
  const torch::Tensor anchors = anchor.repeat_interleave(r.size(0));
  const torch::Tensor rels = r.repeat(anchor.size(0));
  score_pairs(m, anchors, rels, corrupt_head ? h : t, corrupt_head, best);
}

void score_triplets(const TrainedModel& m, const torch::Tensor& h, const torch::Tensor& r, const torch::Tensor& t,
                    BestK* best) {
  if (h.size(0) != r.size(0) || r.size(0) != t.size(0))
    fail("--exec_mode triplet_wise scores the i-th head, relation and tail together: the lists must be as long, got "
         "{} heads, {} relations and {} tails",
         h.size(0), r.size(0), t.size(0));
  const torch::Tensor scores =
      finish(m, m.score->positive(m.tables.entities.index_select(0, h), m.tables.relations.index_select(0, r),
                                  m.tables.entities.index_select(0, t)));
  best->offer(scores, scores, [&](const torch::Tensor& at) {
    return torch::stack({h.index_select(0, at), r.index_select(0, at), t.index_select(0, at)}, 1);
  });
}

std::string resolve_map(const std::string& given, const PredictOptions& p, const char* saved) {
  if (given.empty()) return (fs::path(p.model_path) / saved).string();
  if (fs::exists(given)) return given;
  return (fs::path(p.data_path) / given).string();
}

void check(const PredictOptions& p) {
  if (p.topk < 1) fail("--topK must be at least 1, got {}", p.topk);
  check_choice(p.score_func, {"none", "logsigmoid"}, "--score_func");
  check_choice(p.exec_mode, {"all", "triplet_wise", "batch_head", "batch_rel", "batch_tail"}, "--exec_mode");
}

}  // namespace

int run_kge_predict(const PredictOptions& p) {
  check(p);
  const std::vector<std::string> parts = format_parts(p.format, {"h_r_t", "h_r_*", "h_*_t", "*_r_t", "h_*_*", "*_r_*", "*_*_t"}, p.data_files.size());
  set_num_threads(p.num_thread);
  keep_freed_memory();
  Timer timer;
  const TrainedModel m = load_model(p);
  IdMap entity_map, relation_map;
  if (p.raw_data) {
    entity_map = read_id_map(resolve_map(p.entity_mfile, p, "entities.tsv"));
    relation_map = read_id_map(resolve_map(p.rel_mfile, p, "relations.tsv"));
  }
  torch::Tensor lists[3];
  size_t file = 0;
  for (int c = 0; c < 3; ++c) {
    const bool relation = c == 1;
    const int64_t count = relation ? m.num_relations() : m.num_entities();
    const char* what = c == 0 ? "head" : relation ? "relation" : "tail";
    lists[c] = parts[c] == "*" ? every_id(count)
                               : read_object_list(p.data_files[file++], count,
                                                  p.raw_data ? (relation ? &relation_map : &entity_map) : nullptr, what);
  }
  const torch::Tensor &h = lists[0], &r = lists[1], &t = lists[2];
  std::vector<BestK::Row> rows;
  auto collect = [&](BestK& best) {
    auto kept = best.take();
    rows.insert(rows.end(), kept.begin(), kept.end());
  };
  torch::NoGradGuard no_grad;
  if (p.exec_mode == "all" || p.exec_mode == "triplet_wise") {
    BestK best(p.topk, 3);
    if (p.exec_mode == "all") score_all(m, h, r, t, &best);
    else score_triplets(m, h, r, t, &best);
    collect(best);
  } else {
    // One top K per element of the list named by the mode.
    const int c = p.exec_mode == "batch_head" ? 0 : p.exec_mode == "batch_rel" ? 1 : 2;
    for (int64_t i = 0; i < lists[c].size(0); ++i) {
      torch::Tensor one[3] = {h, r, t};
      one[c] = lists[c].narrow(0, i, 1);
      BestK best(p.topk, 3);
      score_all(m, one[0], one[1], one[2], &best);
      collect(best);
    }
  }
  write_result(p.output, "head\trel\ttail\tscore", rows, 3,
               {p.raw_data ? &entity_map : nullptr, p.raw_data ? &relation_map : nullptr,
                p.raw_data ? &entity_map : nullptr});
  fmt::print("predict: {} rows ({} heads x {} relations x {} tails, --exec_mode {}, top {}) -> {} in {:.2f}s\n",
             rows.size(), h.size(0), r.size(0), t.size(0), p.exec_mode, p.topk, p.output, timer.seconds());
  return 0;
}

}  // namespace tessera::kge
