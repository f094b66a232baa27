// `tessera kge emb_sim` (dglke_emb_sim): the most similar pairs of rows of
// one embedding table.
#include <fmt/format.h>
#include <torch/torch.h>

#include "embedding_table.h"
#include "infer_common.h"
#include "tessera/base/error.h"
#include "tessera/base/threads.h"
#include "tessera/base/timer.h"
#include "tessera/io/npy.h"
#include "tessera/kge/kge_infer.h"

namespace tessera::kge {
namespace {

// DGL-KE's five similarities; l1 and l2 are distances (smaller is more similar).
struct Similarity {
  std::string name;
  bool distance() const { return name == "l1" || name == "l2"; }

  // [a, d] x [b, d] -> [a, b]
  torch::Tensor all(const torch::Tensor& x, const torch::Tensor& y) const {
    if (name == "l2") return torch::cdist(x, y, 2.0, /*compute_mode: never through a product, exact*/ 2);
    if (name == "l1") return torch::cdist(x, y, 1.0);
    const torch::Tensor dot = x.mm(y.t());
    if (name == "dot") return dot;
    const torch::Tensor xx = x.mul(x).sum(1, true), yy = y.mul(y).sum(1).unsqueeze(0);
    if (name == "cosine") return dot / (xx.sqrt() * yy.sqrt()).clamp_min(1e-12);
    return dot / (xx + yy - dot);  // ext_jaccard
  }
  // [n, d] x [n, d] -> [n], row by row
  torch::Tensor pairs(const torch::Tensor& x, const torch::Tensor& y) const {
    if (name == "l2") return (x - y).norm(2, 1);
    if (name == "l1") return (x - y).abs().sum(1);
    const torch::Tensor dot = x.mul(y).sum(1);
    if (name == "dot") return dot;
    const torch::Tensor xx = x.mul(x).sum(1), yy = y.mul(y).sum(1);
    if (name == "cosine") return dot / (xx.sqrt() * yy.sqrt()).clamp_min(1e-12);
    return dot / (xx + yy - dot);
  }
  torch::Tensor key(const torch::Tensor& score) const { return distance() ? -score : score; }
};

void check(const EmbSimOptions& o) {
  if (o.emb_file.empty()) fail("--emb_file is required (an entity or relation table that training saved)");
  if (o.topk < 1) fail("--topK must be at least 1, got {}", o.topk);
  check_choice(o.sim_func, {"cosine", "l2", "l1", "dot", "ext_jaccard"}, "--sim_func");
  check_choice(o.exec_mode, {"all", "pairwise", "batch_left"}, "--exec_mode");
  if (o.raw_data && o.mfile.empty()) fail("--raw_data needs --mfile, the ID map of the table's rows");
}

// Left rows in blocks against all right rows; one BestK for all of them, or one per left row.
void score_all(const Similarity& sim, const torch::Tensor& emb, const torch::Tensor& left, const torch::Tensor& right,
               bool per_left, int64_t k, std::vector<BestK::Row>* rows) {
  const int64_t n = right.size(0);
  const torch::Tensor r = emb.index_select(0, right);
  const int64_t block = std::max<int64_t>(1, kInferBlockElements / n);
  BestK overall(k, 2);
  for (int64_t from = 0; from < left.size(0); from += block) {
    const int64_t len = std::min(block, left.size(0) - from);
    const torch::Tensor l = left.narrow(0, from, len);
    const torch::Tensor scores = sim.all(emb.index_select(0, l), r);
    for (int64_t i = 0; i < len && per_left; ++i) {
      BestK one(k, 2);
      one.offer(sim.key(scores[i]), scores[i], [&](const torch::Tensor& at) {
        return torch::stack({l[i].expand({at.size(0)}), right.index_select(0, at)}, 1);
      });
      auto kept = one.take();
      rows->insert(rows->end(), kept.begin(), kept.end());
    }
    if (!per_left) {
      const torch::Tensor flat = scores.reshape({-1});
      overall.offer(sim.key(flat), flat, [&](const torch::Tensor& at) {
        return torch::stack({l.index_select(0, at.div(n, "floor")), right.index_select(0, at.remainder(n))}, 1);
      });
    }
  }
  if (!per_left) *rows = overall.take();
}

}  // namespace

int run_kge_emb_sim(const EmbSimOptions& o) {
  check(o);
  const std::vector<std::string> parts = format_parts(o.format, {"l_r", "l_*", "*_r", "*"}, o.data_files.size());
  set_num_threads(o.num_thread);
  keep_freed_memory();
  Timer timer;
  const torch::Tensor emb = tensor_of(read_npy_checked(o.emb_file, DType::kFloat32, 2, "embedding"));
  IdMap names;
  if (o.raw_data) {
    names = read_id_map(o.mfile);
    if (static_cast<int64_t>(names.names.size()) != emb.size(0))
      fail("--mfile {} names {} objects, but {} has {} rows", o.mfile, names.names.size(), o.emb_file, emb.size(0));
  }
  const IdMap* map = o.raw_data ? &names : nullptr;
  torch::Tensor sides[2];
  size_t file = 0;
  for (int c = 0; c < 2; ++c) {
    const bool star = parts.size() == 1 || parts[c] == "*";
    sides[c] = star ? every_id(emb.size(0))
                    : read_object_list(o.data_files[file++], emb.size(0), map, c == 0 ? "left object" : "right object");
  }
  const Similarity sim{o.sim_func};
  std::vector<BestK::Row> rows;
  torch::NoGradGuard no_grad;
  if (o.exec_mode == "pairwise") {
    if (sides[0].size(0) != sides[1].size(0))
      fail("--exec_mode pairwise scores the i-th left and right objects together: the lists must be as long, got {} "
           "and {}",
           sides[0].size(0), sides[1].size(0));
    const torch::Tensor scores = sim.pairs(emb.index_select(0, sides[0]), emb.index_select(0, sides[1]));
    BestK best(o.topk, 2);
    best.offer(sim.key(scores), scores, [&](const torch::Tensor& at) {
      return torch::stack({sides[0].index_select(0, at), sides[1].index_select(0, at)}, 1);
    });
    rows = best.take();
  } else {
    score_all(sim, emb, sides[0], sides[1], o.exec_mode == "batch_left", o.topk, &rows);
  }
  write_result(o.output, "left\tright\tscore", rows, 2, {map, map});
  fmt::print("emb_sim: {} rows ({} left x {} right, {}, --exec_mode {}, top {}) -> {} in {:.2f}s\n", rows.size(),
             sides[0].size(0), sides[1].size(0), o.sim_func, o.exec_mode, o.topk, o.output, timer.seconds());
  return 0;
}

}  // namespace tessera::kge
