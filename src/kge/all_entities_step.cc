#include "all_entities_step.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "row_penalty.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera::kge {
namespace {

// Below this many queries per chunk the GEMMs lose their shape: refused
// rather than run at a fraction of their speed.
constexpr int64_t kMinChunkRows = 16;

int64_t non_finite(const torch::Tensor& t) { return (~torch::isfinite(t)).sum().item<int64_t>(); }

// out += g, through dropout's draw when `dropped` (g is overwritten).
void add_through_draw(float* g, int64_t n, bool dropped, const nn::detail::DropoutDraw& draw, float* out) {
  if (dropped) nn::detail::dropout_backward(g, n, draw, g);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) out[j] += g[j];
}

}  // namespace

std::string all_entities_refusal(const ScoreOptions& model, int num_proc, const std::string& mode) {
  const std::unique_ptr<FusedModel> fused = make_fused_model(model);
  if (fused == nullptr || fused->negative_kind() != NegativeKind::kDot)
    return fmt::format(
        "--train_mode {} scores a query against every entity as one matrix product, which {}'s score is not "
        "here; it trains DistMult, ComplEx and RESCAL. Train {} with --train_mode negative_sampling",
        mode, model_name(model.model), model_name(model.model));
  if (num_proc != 1)
    return fmt::format(
        "--train_mode {} runs one worker, whose matrix products use every thread: drop --num_proc {} "
        "(--num_thread sets the threads)",
        mode, num_proc);
  return "";
}

int64_t all_entities_min_bytes(int64_t num_entities, int64_t entity_dim, int64_t queries) {
  return static_cast<int64_t>(sizeof(float)) * num_entities * (entity_dim + std::min(queries, kMinChunkRows));
}

int64_t all_entities_chunk_rows(int64_t num_entities, int64_t entity_dim, int64_t queries, int64_t budget_bytes) {
  const int64_t left = budget_bytes - static_cast<int64_t>(sizeof(float)) * num_entities * entity_dim;
  const int64_t rows = std::min(queries, std::max<int64_t>(0, left) / (static_cast<int64_t>(sizeof(float)) * num_entities));
  return rows >= std::min(queries, kMinChunkRows) ? rows : 0;
}

nn::detail::DropoutDraw query_draw(const nn::detail::DropoutDraw& base, int64_t query, int64_t width) {
  // Query i's elements take the quads of draws after query i - 1's: one stream over the queries' rows (the
  // same stream as one draw over a contiguous table of them when width is a multiple of 4).
  nn::detail::DropoutDraw d = base;
  d.seed += static_cast<uint64_t>(query) * static_cast<uint64_t>((width + 3) / 4) * nn::detail::kDrawStep;
  return d;
}

AllEntitiesStep::AllEntitiesStep(const ScoreOptions& model, const Regularization& reg, int64_t num_relations,
                                 bool reciprocal, int64_t chunk_rows, EmbeddingDropout dropout, MultiLabel kvsall)
    : model_(make_fused_model(model)),
      reg_(reg),
      num_relations_(num_relations),
      reciprocal_(reciprocal),
      chunk_rows_(chunk_rows),
      dropout_(dropout),
      kvsall_(kvsall) {
  const std::string refusal = all_entities_refusal(model, 1);
  if (!refusal.empty()) fail("{}", refusal);
  if (model_->transforms_relations()) fail("1vsAll: {} reads transformed relation rows", model_name(model.model));
  if (chunk_rows_ < 1) fail("1vsAll: a chunk of scores needs at least one query, got {}", chunk_rows_);
  for (const double p : {dropout.entity, dropout.relation})
    if (!(p >= 0 && p < 1)) fail("1vsAll: a dropout probability must be in [0, 1), got {}", p);
  if (!(kvsall.label_smoothing >= 0 && kvsall.label_smoothing < 1))
    fail("KvsAll: label smoothing must be in [0, 1), got {}", kvsall.label_smoothing);
  if (kvsall.label_smoothing > 0 && kvsall.queries == nullptr)
    fail("label smoothing smooths KvsAll's multi-label targets; 1vsAll has one answer per query");
}

void AllEntitiesStep::set_queries(const sampling::TripleBatch& b) {
  const int64_t n = b.size(), queries = kvsall_.queries != nullptr ? n : 2 * n;
  anchors_.resize(queries);
  relations_.resize(queries);
  as_head_.resize(queries);
  target_offsets_.assign(1, 0);
  targets_.clear();
  if (kvsall_.queries != nullptr) {
    const KvsAllQueries& kq = *kvsall_.queries;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t q = b.tail[i];
      if (q < 0 || q >= kq.size()) fail("KvsAll: batch row {} names query {} of {}", i, q, kq.size());
      anchors_[i] = b.head[i];
      relations_[i] = b.relation[i];
      as_head_[i] = kq.as_head[q];
      targets_.insert(targets_.end(), kq.answers_of(q), kq.answers_of(q) + kq.num_answers(q));
      target_offsets_.push_back(static_cast<int64_t>(targets_.size()));
    }
    return;
  }
  // Query i < n asks for the tail of positive i, query n + i for its head.
  targets_.resize(queries);
  for (int64_t i = 0; i < n; ++i) {
    anchors_[i] = b.head[i];
    relations_[i] = b.relation[i];
    targets_[i] = b.tail[i];
    as_head_[i] = false;
    anchors_[n + i] = b.tail[i];
    relations_[n + i] = reciprocal_ ? b.relation[i] + num_relations_ : b.relation[i];
    targets_[n + i] = b.head[i];
    as_head_[n + i] = !reciprocal_;
  }
  for (int64_t i = 1; i <= queries; ++i) target_offsets_.push_back(i);
}

void AllEntitiesStep::check_relations(const torch::Tensor& relations) const {
  const int64_t rows = num_relations_ * (reciprocal_ ? 2 : 1);
  if (relations.size(0) != rows || relations.size(1) != model_->relation_dim())
    fail("1vsAll: a relation table of {} x {} does not fit the model ({} {}-wide rows)", relations.size(0),
         relations.size(1), rows, model_->relation_dim());
}

void AllEntitiesStep::query_rows(int64_t i, const float* e, const float* r, const float** anchor,
                                 const float** relation) {
  const int64_t de = model_->entity_dim(), dr = model_->relation_dim();
  *anchor = e + slot(anchors_[i]) * de;
  *relation = r + relations_[i] * dr;
  if (dropout_.entity > 0) {
    nn::detail::dropout_forward(*anchor, de, query_draw(draws_.anchors, i, de), anchor_row_.data());
    *anchor = anchor_row_.data();
  }
  if (dropout_.relation > 0) {
    nn::detail::dropout_forward(*relation, dr, query_draw(draws_.relations, i, dr), relation_row_.data());
    *relation = relation_row_.data();
  }
}

void AllEntitiesStep::set_weights(int64_t num_entities) {
  // Per query: the target weight of each answer and of every candidate (smoothing's), normalised to sum to 1.
  const float smooth = static_cast<float>(kvsall_.label_smoothing);
  const int64_t queries = static_cast<int64_t>(anchors_.size());
  answer_weight_.resize(queries);
  uniform_weight_.resize(queries);
  for (int64_t i = 0; i < queries; ++i) {
    const float answers = static_cast<float>(target_offsets_[i + 1] - target_offsets_[i]);
    const float total = (1 - smooth) * answers + (smooth > 0 ? 1.f : 0.f);
    answer_weight_[i] = (1 - smooth) / total;
    uniform_weight_[i] = smooth > 0 ? 1.f / (static_cast<float>(num_entities) * total) : 0.f;
  }
}

void AllEntitiesStep::build_queries(const float* e, const float* r) {
  const int64_t de = model_->entity_dim(), dr = model_->relation_dim();
  const int64_t queries = static_cast<int64_t>(anchors_.size());
  if (!queries_.defined() || queries_.size(0) < queries || queries_.size(1) != de) {
    queries_ = torch::empty({queries, de}, torch::kFloat32);
    query_grad_ = torch::empty({queries, de}, torch::kFloat32);
  }
  // Dropout's draws for this step (none taken without dropout, so its runs keep their random stream).
  const auto draw = [](double p) {
    return p > 0 ? nn::detail::DropoutDraw::from_generator(p) : nn::detail::DropoutDraw::relu_only();
  };
  draws_ = {draw(dropout_.entity), draw(dropout_.relation), draw(dropout_.entity)};
  anchor_row_.resize(de);
  relation_row_.resize(dr);
  float* q = queries_.data_ptr<float>();
  for (int64_t i = 0; i < queries; ++i) {
    const float *anchor, *relation;
    query_rows(i, e, r, &anchor, &relation);
    model_->query(anchor, relation, as_head_[i], q + i * de);
  }
}

double AllEntitiesStep::score_locally(const torch::Tensor& entities, torch::Tensor* entity_grad) {
  const int64_t num_entities = entities.size(0);
  const int64_t queries = static_cast<int64_t>(anchors_.size());
  if (!scores_.defined() || scores_.size(1) != num_entities)
    scores_ = torch::empty({chunk_rows_, num_entities}, torch::kFloat32);
  // The candidates: the table itself, or its copy with this step's dropout.
  torch::Tensor candidates = entities;
  if (dropout_.entity > 0) {
    if (!candidates_.defined() || candidates_.sizes() != entities.sizes()) candidates_ = torch::empty_like(entities);
    nn::detail::dropout_forward(entities.data_ptr<float>(), entities.numel(), draws_.candidates,
                                candidates_.data_ptr<float>());
    candidates = candidates_;
  }
  const torch::Tensor candidates_t = candidates.t();
  const float inv = 1.0f / static_cast<float>(queries);
  double ce = 0;
  for (int64_t first = 0; first < queries; first += chunk_rows_) {
    const int64_t rows = std::min(chunk_rows_, queries - first);
    const torch::Tensor qc = queries_.narrow(0, first, rows);
    torch::Tensor s = scores_.narrow(0, 0, rows);
    torch::mm_out(s, qc, candidates_t);
    const torch::Tensor lse = s.logsumexp(1);
    // Label smoothing spreads 1 / entities over every candidate: its share of the target needs the row sums.
    const bool smooth = kvsall_.label_smoothing > 0;
    const torch::Tensor row_sums = smooth ? s.sum(1) : torch::Tensor();
    const float* sums_p = smooth ? row_sums.data_ptr<float>() : nullptr;
    const float* lse_p = lse.data_ptr<float>();
    float* sp = s.data_ptr<float>();
    const float* answer_weight = answer_weight_.data() + first;
    const float* uniform_weight = uniform_weight_.data() + first;
    for (int64_t i = 0; i < rows; ++i) {
      double target_score = 0;
      for (int64_t k = target_offsets_[first + i]; k < target_offsets_[first + i + 1]; ++k)
        target_score += sp[i * num_entities + targets_[k]];
      target_score *= answer_weight[i];
      if (smooth) target_score += static_cast<double>(uniform_weight[i]) * sums_p[i];
      ce += lse_p[i] - target_score;
    }
    // d loss / d score: (softmax - target) / queries, in place of the scores.
    s.sub_(lse.unsqueeze(1)).exp_();
    for (int64_t i = 0; i < rows; ++i) {
      float* row = sp + i * num_entities;
      if (uniform_weight[i] > 0) {
        const float u = uniform_weight[i];
#pragma omp simd
        for (int64_t j = 0; j < num_entities; ++j) row[j] -= u;
      }
      for (int64_t k = target_offsets_[first + i]; k < target_offsets_[first + i + 1]; ++k)
        row[targets_[k]] -= answer_weight[i];
    }
    s.mul_(inv);
    torch::Tensor dq = query_grad_.narrow(0, first, rows);
    torch::mm_out(dq, s, candidates);
    entity_grad->addmm_(s.t(), qc);
  }
  // What reached the candidates' copy reaches the table through the same draws.
  float* ge = entity_grad->data_ptr<float>();
  if (dropout_.entity > 0) nn::detail::dropout_backward(ge, entity_grad->numel(), draws_.candidates, ge);
  return ce;
}

void AllEntitiesStep::backward_queries(const float* e, const float* r, float* ge, float* gr) {
  const FusedModel& m = *model_;
  const int64_t de = m.entity_dim(), dr = m.relation_dim();
  const int64_t queries = static_cast<int64_t>(anchors_.size());
  const float* dq = query_grad_.data_ptr<float>();
  if (dropout_.entity == 0 && dropout_.relation == 0) {
    for (int64_t i = 0; i < queries; ++i) {
      const int64_t a = slot(anchors_[i]);
      m.query_backward(dq + i * de, e + a * de, r + relations_[i] * dr, as_head_[i], ge + a * de,
                       gr + relations_[i] * dr);
    }
    return;
  }
  // Each query's gradients through its own copies, then back through its draws into the table's rows.
  anchor_grad_.resize(de);
  relation_grad_row_.resize(dr);
  for (int64_t i = 0; i < queries; ++i) {
    const float *anchor, *relation;
    query_rows(i, e, r, &anchor, &relation);
    std::fill(anchor_grad_.begin(), anchor_grad_.end(), 0.f);
    std::fill(relation_grad_row_.begin(), relation_grad_row_.end(), 0.f);
    m.query_backward(dq + i * de, anchor, relation, as_head_[i], anchor_grad_.data(), relation_grad_row_.data());
    add_through_draw(anchor_grad_.data(), de, dropout_.entity > 0, query_draw(draws_.anchors, i, de),
                     ge + slot(anchors_[i]) * de);
    add_through_draw(relation_grad_row_.data(), dr, dropout_.relation > 0, query_draw(draws_.relations, i, dr),
                     gr + relations_[i] * dr);
  }
}

// The entity rows the step reads itself: its anchors, and KvsAll's answers
// when the penalty reads them.
void AllEntitiesStep::collect_batch_entities() {
  batch_entities_.assign(anchors_.begin(), anchors_.end());
  if (kvsall_.queries != nullptr && reg_.coefficient > 0)
    batch_entities_.insert(batch_entities_.end(), targets_.begin(), targets_.end());
  distinct(batch_entities_, &distinct_entities_);
}

double AllEntitiesStep::penalty(int64_t positives, const float* e, const float* r, float* ge, float* gr) {
  // The -rc penalty. Unweighted, as the negative-sampling steps take it:
  // each distinct entity the batch names once, each relation row once per
  // use. Weighted (LibKGE's weighted Lp): each row by its share of the
  // batch's uses, so that in expectation a row is penalised in proportion
  // to its frequency in the training data.
  const int64_t de = model_->entity_dim(), dr = model_->relation_dim();
  double entity_sum = 0, relation_sum = 0;
  if (reg_.coefficient > 0) {
    collect_batch_entities();
    entity_uses_.assign(distinct_entities_.unique.size(), 0);
    for (const int64_t k : distinct_entities_.positions) ++entity_uses_[k];
    const double per_use = 1.0 / static_cast<double>(batch_entities_.size());
    for (size_t k = 0; k < distinct_entities_.unique.size(); ++k) {
      const int64_t row = slot(distinct_entities_.unique[k]);
      const double w = reg_.weighted ? static_cast<double>(entity_uses_[k]) * per_use : 1.0;
      entity_sum +=
          w * penalty_row(e + row * de, de, reg_.norm, static_cast<float>(reg_.coefficient * w), ge + row * de);
    }
  }
  if (reg_.relation() > 0) {
    // 1vsAll without --reciprocal asks both of a positive's queries through one row: counted once.
    const int64_t queries = static_cast<int64_t>(anchors_.size());
    const int64_t relation_uses = (reciprocal_ || kvsall_.queries != nullptr) ? queries : positives;
    const double w = reg_.weighted ? 1.0 / static_cast<double>(relation_uses) : 1.0;
    const float c = static_cast<float>(reg_.relation() * w);
    for (int64_t i = 0; i < relation_uses; ++i)
      relation_sum += w * penalty_row(r + relations_[i] * dr, dr, reg_.norm, c, gr + relations_[i] * dr);
  }
  return reg_.coefficient * entity_sum + reg_.relation() * relation_sum;
}

double AllEntitiesStep::loss_and_gradients(const sampling::TripleBatch& b, const torch::Tensor& entities,
                                           const torch::Tensor& relations, torch::Tensor* entity_grad,
                                           torch::Tensor* relation_grad, double* cross_entropy) {
  check_relations(relations);
  if (entities.size(1) != model_->entity_dim())
    fail("1vsAll: an entity table of {} x {} does not fit the model ({}-wide rows)", entities.size(0),
         entities.size(1), model_->entity_dim());
  set_queries(b);
  set_weights(entities.size(0));
  slots_.clear();  // the whole table: rows by ID
  const float* e = entities.data_ptr<float>();
  const float* r = relations.data_ptr<float>();
  build_queries(e, r);
  entity_grad->zero_();
  relation_grad->zero_();
  *cross_entropy = score_locally(entities, entity_grad) / static_cast<double>(anchors_.size());
  float* ge = entity_grad->data_ptr<float>();
  float* gr = relation_grad->data_ptr<float>();
  backward_queries(e, r, ge, gr);
  return *cross_entropy + penalty(b.size(), e, r, ge, gr);
}

void AllEntitiesStep::run(const sampling::TripleBatch& b, EmbeddingTable& entities, EmbeddingTable& relations,
                          StepTimes* times) {
  auto* relation_table = dynamic_cast<LocalTable*>(&relations);
  if (relation_table == nullptr) fail("--train_mode {}: the relation table is held in this process", mode());
  if (auto* on_servers = dynamic_cast<ServerTable*>(&entities)) return run_on_servers(b, *on_servers, *relation_table, times);
  auto* entity_table = dynamic_cast<LocalTable*>(&entities);
  if (entity_table == nullptr) fail("--train_mode {} trains an entity table in this process or on the servers", mode());
  Timer timer;
  const torch::Tensor e = entity_table->view(), r = relation_table->view();
  if (!entity_grad_.defined() || entity_grad_.sizes() != e.sizes()) {
    entity_grad_ = torch::empty_like(e);
    all_entity_ids_.resize(e.size(0));
    std::iota(all_entity_ids_.begin(), all_entity_ids_.end(), 0);
  }
  prepare_relation_grad(r);
  double ce = 0;
  const double loss = loss_and_gradients(b, e, r, &entity_grad_, &relation_grad_, &ce);
  if (!std::isfinite(loss)) fail_non_finite_loss(loss, non_finite(e), non_finite(r), 0, 0);
  times->compute += timer.lap();
  entities.push(all_entity_ids_, entity_grad_);
  relations.push(all_relation_ids_, relation_grad_);
  times->push += timer.lap();
  count(b, loss, ce, times);
}

void AllEntitiesStep::run_on_servers(const sampling::TripleBatch& b, ServerTable& entities, LocalTable& relations,
                                     StepTimes* times) {
  Timer timer;
  const torch::Tensor r = relations.view();
  check_relations(r);
  set_queries(b);
  const int64_t num_entities = entities.num_rows(), queries = static_cast<int64_t>(anchors_.size());
  set_weights(num_entities);
  // The batch's own rows, pulled: the queries' anchors (and KvsAll's answers when the penalty reads them).
  collect_batch_entities();
  const std::vector<int64_t> ids = distinct_entities_.unique;
  entities.candidates().flush();
  const torch::Tensor rows = entities.pull(ids).contiguous();
  entities.candidates().count_pulled(static_cast<int64_t>(ids.size()));
  if (static_cast<int64_t>(slots_.size()) != num_entities) slots_.assign(num_entities, -1);
  for (size_t k = 0; k < ids.size(); ++k) slots_[ids[k]] = static_cast<int64_t>(k);
  times->pull += timer.lap();

  const float* e = rows.data_ptr<float>();
  build_queries(e, r.data_ptr<float>());
  prepare_relation_grad(r);
  relation_grad_.zero_();
  torch::Tensor row_grad = torch::zeros_like(rows);
  torch::Tensor dq = query_grad_.narrow(0, 0, queries);
  const double ce = entities.candidates().cross_entropy(
                        queries_.narrow(0, 0, queries),
                        {&target_offsets_, &targets_, &answer_weight_, &uniform_weight_},
                        1.0f / static_cast<float>(queries), dropout_.entity, draws_.candidates.seed, &dq) /
                    static_cast<double>(queries);
  float* gr = relation_grad_.data_ptr<float>();
  backward_queries(e, r.data_ptr<float>(), row_grad.data_ptr<float>(), gr);
  const double loss = ce + penalty(b.size(), e, r.data_ptr<float>(), row_grad.data_ptr<float>(), gr);
  for (const int64_t id : ids) slots_[id] = -1;
  if (!std::isfinite(loss)) fail_non_finite_loss(loss, non_finite(rows), non_finite(r), 0, 0);
  times->compute += timer.lap();
  entities.candidates().step(ids, row_grad, entities.lr());
  relations.push(all_relation_ids_, relation_grad_);
  times->push += timer.lap();
  count(b, loss, ce, times);
}

void AllEntitiesStep::prepare_relation_grad(const torch::Tensor& r) {
  if (relation_grad_.defined() && relation_grad_.sizes() == r.sizes()) return;
  relation_grad_ = torch::empty_like(r);
  all_relation_ids_.resize(r.size(0));
  std::iota(all_relation_ids_.begin(), all_relation_ids_.end(), 0);
}

void AllEntitiesStep::count(const sampling::TripleBatch& b, double loss, double ce, StepTimes* times) const {
  times->loss += loss;
  times->positive += ce;
  times->regularization += loss - ce;
  times->steps += 1;
  times->triples += b.size();
}

}  // namespace tessera::kge
