#include "fused_step.h"

#include <cmath>
#include <cstring>

#include "tessera/base/error.h"
#include "tessera/base/timer.h"
#include "row_penalty.h"

namespace tessera::kge {
namespace {

template <typename T>
T* sized(std::vector<T>& buffer, int64_t count) {
  if (static_cast<int64_t>(buffer.size()) < count) buffer.resize(count);
  return buffer.data();
}

template <typename T>
T* zeroed(std::vector<T>& buffer, int64_t count) {
  T* data = sized(buffer, count);
  std::memset(data, 0, sizeof(T) * count);
  return data;
}

torch::Tensor tensor_over(float* data, std::vector<int64_t> shape) {
  return torch::from_blob(data, shape, torch::kFloat32);
}

void prefetch_row(const float* row, int64_t d) {
  for (int64_t j = 0; j < d; j += 64 / sizeof(float)) __builtin_prefetch(row + j);
}

int64_t count_non_finite(const float* const* rows, int64_t count, int64_t d) {
  int64_t bad = 0;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < d; ++j) bad += !std::isfinite(rows[i][j]);
  return bad;
}

}  // namespace

void FusedStep::run(const sampling::TripleBatch& b, EmbeddingTable& entities, EmbeddingTable& relations, StepTimes* times) {
  Timer timer;
  const FusedModel& m = *model_;
  const int64_t n = b.size(), negatives = static_cast<int64_t>(b.negatives.size());
  const int64_t de = m.entity_dim(), dr = m.relation_dim(), dw = m.work_dim();
  b.entities(&all_entities_);
  distinct(all_entities_, &entity_ids_);
  distinct(b.relation, &relation_ids_);
  entities.pull_rows(entity_ids_.unique, &entity_rows_);
  relations.pull_rows(relation_ids_.unique, &relation_rows_);
  times->pull += timer.lap();

  const int64_t num_entities = static_cast<int64_t>(entity_ids_.unique.size());
  const int64_t num_relations = static_cast<int64_t>(relation_ids_.unique.size());
  const float* const* erow = entity_rows_.rows.data();
  const int64_t* head = entity_ids_.positions.data();
  const int64_t* tail = head + n;
  const int64_t* negative = head + 2 * n;
  const int64_t* rel = relation_ids_.positions.data();
  work_rows_ = relation_rows_.rows;
  if (m.transforms_relations()) {
    float* work = sized(work_, num_relations * dw);
    for (int64_t u = 0; u < num_relations; ++u) {
      m.to_work(relation_rows_.rows[u], work + u * dw);
      work_rows_[u] = work + u * dw;
    }
  }
  const float* const* wrow = work_rows_.data();

  // Forward: queries, packed negatives, scores, loss.
  const ChunkShape shape{b.num_chunks, b.chunk_size, b.negatives_per_chunk, de};
  const int64_t* kept = b.corrupt_head ? tail : head;
  float* q = sized(queries_, n * de);
  for (int64_t i = 0; i < n; ++i) m.query(erow[kept[i]], wrow[rel[i]], b.corrupt_head, q + i * de);
  float* neg = sized(negatives_, negatives * de);
  for (int64_t j = 0; j < negatives; ++j) std::memcpy(neg + j * de, erow[negative[j]], sizeof(float) * de);
  float* scores = sized(scores_, n * b.negatives_per_chunk);
  scorer_.forward(q, neg, shape, scores);
  float* pos = sized(positive_, n);
  for (int64_t i = 0; i < n; ++i) pos[i] = m.positive(erow[head[i]], wrow[rel[i]], erow[tail[i]]);
  const torch::Tensor pos_t = tensor_over(pos, {n}), neg_t = tensor_over(scores, {n, b.negatives_per_chunk});
  const LossGradients lg = kge_loss_gradients(pos_t, neg_t, loss_);

  // Backward: into one gradient row per distinct entity and relation.
  float* ge = zeroed(entity_grad_, num_entities * de);
  float* gw = zeroed(work_grad_, num_relations * dw);
  float* dq = sized(query_grad_, n * de);
  float* dn = sized(negative_grad_, negatives * de);
  scorer_.backward(q, neg, lg.negative.data_ptr<float>(), shape, dq, dn);
  for (int64_t j = 0; j < negatives; ++j) {
    float* g = ge + negative[j] * de;
    const float* d = dn + j * de;
#pragma omp simd
    for (int64_t k = 0; k < de; ++k) g[k] += d[k];
  }
  const float* dpos = lg.positive.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* h = erow[head[i]];
    const float* t = erow[tail[i]];
    const float* r = wrow[rel[i]];
    m.query_backward(dq + i * de, b.corrupt_head ? t : h, r, b.corrupt_head, ge + kept[i] * de, gw + rel[i] * dw);
    m.positive_backward(dpos[i], pos[i], h, r, t, ge + head[i] * de, gw + rel[i] * dw, ge + tail[i] * de);
  }
  float* gr = gw;
  if (m.transforms_relations()) {
    gr = zeroed(relation_grad_, num_relations * dr);
    for (int64_t u = 0; u < num_relations; ++u) m.from_work_grad(work_rows_[u], gw + u * dw, gr + u * dr);
  }
  const double penalty = regularize(num_relations);
  const double loss_value = lg.loss.total.item<double>() + penalty;
  if (!std::isfinite(loss_value)) fail_non_finite(loss_value, pos_t, neg_t);
  times->compute += timer.lap();

  entities.push(entity_ids_.unique, tensor_over(ge, {num_entities, de}));
  relations.push(relation_ids_.unique, tensor_over(gr, {num_relations, dr}));
  times->push += timer.lap();
  times->loss += loss_value;
  times->positive += lg.loss.positive;
  times->negative += lg.loss.negative;
  times->regularization += penalty;
  times->steps += 1;
  times->triples += n;
}

double FusedStep::regularize(int64_t num_relations) {
  const double ce = reg_.coefficient, cr = reg_.relation();
  if ((ce <= 0 && cr <= 0) || reg_.norm <= 0) return 0;
  const FusedModel& m = *model_;
  const float c = static_cast<float>(ce), c_rel = static_cast<float>(cr);
  const int64_t de = m.entity_dim(), dr = m.relation_dim();
  float* ge = entity_grad_.data();
  float* gr = m.transforms_relations() ? relation_grad_.data() : work_grad_.data();
  // As the autograd path: each distinct entity row once, each relation row
  // once per positive that uses it.
  double entity_sum = 0, relation_sum = 0;
  // The rows lie scattered over the table, mostly out of cache: fetching a
  // few rows ahead keeps this pass from waiting on each row's first line.
  constexpr size_t kAhead = 4;
  const size_t rows = ce > 0 ? entity_ids_.unique.size() : 0;
  for (size_t u = 0; u < rows; ++u) {
    if (u + kAhead < rows) prefetch_row(entity_rows_.rows[u + kAhead], de);
    entity_sum += penalty_row(entity_rows_.rows[u], de, reg_.norm, c, ge + u * de);
  }
  if (cr > 0) {
    int32_t* count = zeroed(relation_counts_, num_relations);
    for (const int64_t p : relation_ids_.positions) ++count[p];
    for (int64_t u = 0; u < num_relations; ++u)
      relation_sum += static_cast<double>(count[u]) *
                      penalty_row(relation_rows_.rows[u], dr, reg_.norm, c_rel * count[u], gr + u * dr);
  }
  return ce * entity_sum + cr * relation_sum;
}

void FusedStep::fail_non_finite(double loss, const torch::Tensor& positive, const torch::Tensor& negative) const {
  auto bad = [](const torch::Tensor& x) { return (~torch::isfinite(x)).sum().item<int64_t>(); };
  fail_non_finite_loss(loss, count_non_finite(entity_rows_.rows.data(), static_cast<int64_t>(entity_rows_.rows.size()), model_->entity_dim()),
       count_non_finite(relation_rows_.rows.data(), static_cast<int64_t>(relation_rows_.rows.size()),
                        model_->relation_dim()),
       bad(positive), bad(negative));
}

}  // namespace tessera::kge
