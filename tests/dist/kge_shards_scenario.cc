// 1vsAll / KvsAll steps with the entity table on the servers (each machine's
// server scoring its own shard) against the standalone step on the same
// tables, batch and dropout draws: the loss, and every entity and relation
// row after the step's optimizer (each kind), must agree. Trainer 0 steps; the other
// trainers only hold the job open.
#include <fmt/format.h>

#include <memory>
#include <numeric>

#include "kge/all_entities_step.h"
#include "kge/embedding_table.h"
#include "kge/kvsall_queries.h"
#include "kge/shard_scores_service.h"
#include "net/transport.h"
#include "scenarios.h"
#include "tessera/base/random.h"

namespace {

using namespace tessera;
using namespace tessera::kge;

constexpr int64_t kRelations = 5, kPositives = 48;
constexpr double kLr = 0.1;

// What the optimizer makes of `rows` from a zero state and `grad`: Adagrad (row-wise, or element-wise), or
// Adam, whose bias-corrected first step is lr x g / (|g| + eps).
torch::Tensor step_from_zero(const torch::Tensor& rows, const torch::Tensor& grad, store::SparseOptimizer kind) {
  if (kind == store::SparseOptimizer::kAdam) return rows - kLr * grad / (grad.abs() + 1e-8);
  const torch::Tensor state =
      kind == store::SparseOptimizer::kAdagrad ? grad.pow(2) : grad.pow(2).mean(1, true);
  return rows - kLr * grad / (state.sqrt() + 1e-10);
}

struct Case {
  const char* name;
  int64_t entity_dim, relation_dim;
  ScoreOptions model;
  Regularization reg;
  EmbeddingDropout dropout;
  bool kvsall;
  double label_smoothing;
  store::SparseOptimizer optimizer = store::SparseOptimizer::kRowAdagrad;
};

void check_case(distributed::Context& ctx, const Case& c, int index) {
  ServerTable entities(ctx, fmt::format("kge-shards-{}", index), c.entity_dim, ctx.book().node_policy(0),
                       uniform_init(0.5, 3 + index), kLr, c.optimizer);
  const int64_t num_entities = entities.num_rows();
  LocalTable relations("kge-relation", 2 * kRelations, c.relation_dim, uniform_init(0.5, 11 + index), kLr,
                       c.optimizer);
  Rng rng(17, index);
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < kPositives; ++i)
    for (const int64_t bound : {num_entities, kRelations, num_entities})
      flat.push_back(static_cast<int64_t>(rng.below(static_cast<uint64_t>(bound))));
  Array triples = Array::zeros(DType::kInt64, {kPositives, 3});
  std::copy(flat.begin(), flat.end(), triples.data<int64_t>());
  const KvsAllQueries queries = kvsall_queries(triples, kRelations, true);
  sampling::TripleBatch batch;
  const Array& rows = c.kvsall ? queries.queries : triples;
  for (int64_t i = 0; i < rows.rows(); ++i) {
    batch.head.push_back(rows.data<int64_t>()[3 * i]);
    batch.relation.push_back(rows.data<int64_t>()[3 * i + 1]);
    batch.tail.push_back(rows.data<int64_t>()[3 * i + 2]);
  }
  const MultiLabel labels{c.kvsall ? &queries : nullptr, c.label_smoothing};
  std::vector<int64_t> all(num_entities);
  std::iota(all.begin(), all.end(), 0);
  const torch::Tensor e0 = entities.pull(all), r0 = relations.view().clone();

  AllEntitiesStep on_servers(c.model, c.reg, kRelations, true, 1, c.dropout, labels);
  StepTimes times;
  torch::manual_seed(5);
  on_servers.run(batch, entities, relations, &times);
  entities.flush();
  const torch::Tensor e1 = entities.pull(all), r1 = relations.view().clone();

  // Standalone, in chunks of 7 queries, from the same tables and draws.
  AllEntitiesStep here(c.model, c.reg, kRelations, true, 7, c.dropout, labels);
  torch::Tensor ge = torch::empty_like(e0), gr = torch::empty_like(r0);
  double ce = 0;
  torch::manual_seed(5);
  const double loss = here.loss_and_gradients(batch, e0, r0, &ge, &gr, &ce);
  // Element-wise from a zero state, an element moves by lr x g / (|g| + eps): where |g| is within a few
  // orders of that eps (Adagrad's 1e-10, Adam's 1e-8), the summation order of the shards' products alone
  // decides it, so those elements are left out (dropped ones, exactly 0, stay in).
  const bool per_element = c.optimizer != store::SparseOptimizer::kRowAdagrad;
  const torch::Tensor settled =
      per_element ? ((ge.abs() > 1e-8) | (ge == 0)).to(torch::kFloat32) : torch::ones_like(ge);
  EXPECT_OR_FAIL(settled.mean().item<double>() > 0.99, "{}: only {} of the gradient's elements are 0 or above 1e-8",
                 c.name, settled.mean().item<double>());
  const double entity_gap =
      ((e1 - step_from_zero(e0, ge, c.optimizer)).abs() * settled).max().item<double>();
  const double relation_gap = (r1 - step_from_zero(r0, gr, c.optimizer)).abs().max().item<double>();
  EXPECT_OR_FAIL(std::abs(times.loss - loss) < 1e-5 * std::max(1.0, loss), "{}: loss on the servers {} against {}",
                 c.name, times.loss, loss);
  EXPECT_OR_FAIL(entity_gap < 1e-4 && relation_gap < 1e-4,
                 "{}: after the step the entity rows differ by up to {} and the relation rows by {}", c.name,
                 entity_gap, relation_gap);
  EXPECT_OR_FAIL((e1 - e0).abs().max().item<double>() > 1e-3, "{}: the step moved no entity row", c.name);
  fmt::print("kge step on the servers matches the standalone step: {} (loss {:.6f}, entity rows within {:.1e})\n",
             c.name, loss, entity_gap);
}

}  // namespace

int run_kge_shards(const std::map<std::string, std::string>&) {
  auto ctx = distributed::initialize();
  const std::vector<Case> cases{
      {"1vsAll ComplEx", 16, 16, {Model::kComplEx, 16, 0.0, false, false}, {1e-3, 3, -1, false}, {}, false, 0},
      {"1vsAll DistMult, dropout, weighted penalty", 16, 16, {Model::kDistMult, 16, 0.0, false, false},
       {1e-3, 2, 1e-4, true}, {0.2, 0.3}, false, 0},
      {"KvsAll RESCAL, label smoothing, dropout", 4, 16, {Model::kRESCAL, 4, 0.0, false, false},
       {1e-3, 3, -1, false}, {0.1, 0.2}, true, 0.1},
      {"1vsAll ComplEx, element-wise Adagrad", 16, 16, {Model::kComplEx, 16, 0.0, false, false},
       {1e-3, 3, -1, false}, {0.05, 0.4}, false, 0, store::SparseOptimizer::kAdagrad},
      {"1vsAll DistMult, Adam", 16, 16, {Model::kDistMult, 16, 0.0, false, false}, {1e-3, 3, -1, false}, {0.1, 0.2},
       false, 0, store::SparseOptimizer::kAdam},
  };
  if (ctx->rank() == 0) {
    // A step before its scores is an error reply naming the order, and the server goes on serving.
    net::Header h = net::make_header(kShardStep, 0, "kge-shards-0");
    try {
      ctx->client().wait({ctx->client().send(ctx->server_for(0), h, {})});
      fail("a shard step without scores was answered");
    } catch (const Error& e) {
      EXPECT_OR_FAIL(std::string(e.what()).find("shard step of trainer 0 arrived out of order") != std::string::npos,
                     "unexpected error: {}", e.what());
    }
    fmt::print("a shard step before its scores is refused: out of order\n");
  }
  {
    // A tensor deleted between a step's scores and its gradients: an error
    // reply naming it, not a read of rows no longer mapped.
    auto gone = std::make_unique<ServerTable>(*ctx, "kge-shards-gone", 4, ctx->book().node_policy(0),
                                              uniform_init(0.5, 1), kLr);
    net::Header scores = net::make_header(kShardScores, 0, "kge-shards-gone");
    net::set_shape(&scores, DType::kFloat32, {1, 4});
    if (ctx->rank() == 0) {
      std::vector<zmq::message_t> frames;
      frames.push_back(net::frame_of(array_of(torch::ones({1, 4}))));
      frames.push_back(net::frame_of(std::vector<int64_t>{0, 1}));
      frames.push_back(net::frame_of(std::vector<int64_t>{0}));
      frames.push_back(net::frame_of(std::vector<int64_t>{0}));
      ctx->client().wait({ctx->client().send(ctx->server_for(0), scores, std::move(frames))});
    }
    ctx->barrier();
    gone.reset();  // trainer 0's handle deletes the tensor
    ctx->barrier();
    if (ctx->rank() == 0) {
      net::Header gradients = net::make_header(kShardGradients, 0, "kge-shards-gone");
      std::vector<zmq::message_t> frames;
      frames.push_back(net::frame_of(array_of(torch::zeros({1, 3}))));
      try {
        ctx->client().wait({ctx->client().send(ctx->server_for(0), gradients, std::move(frames))});
        fail("gradients of a deleted tensor were answered");
      } catch (const Error& e) {
        EXPECT_OR_FAIL(std::string(e.what()).find("kge-shards-gone") != std::string::npos, "unexpected error: {}",
                       e.what());
      }
      fmt::print("gradients after the tensor was deleted are refused\n");
    }
  }
  // Every trainer creates each table (collective); trainer 0 steps.
  for (size_t i = 0; i < cases.size(); ++i) {
    if (ctx->rank() == 0) {
      check_case(*ctx, cases[i], static_cast<int>(i));
    } else {
      ServerTable table(*ctx, fmt::format("kge-shards-{}", i), cases[i].entity_dim, ctx->book().node_policy(0),
                        uniform_init(0.5, 3 + i), kLr, cases[i].optimizer);
    }
    ctx->barrier();
  }
  ctx->finalize();
  return 0;
}
