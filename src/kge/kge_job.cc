#include "kge_job.h"

#include <cstdlib>
#include <numeric>
#include <fstream>

#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/dist_tensor.h"
#include "distributed/id_chunks.h"
#include "tessera/io/npy.h"
#include "tessera/store/partition_store.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace tessera::kge {
namespace {

// Splits `triples` into `parts` contiguous shares of a seeded shuffle.
std::vector<Array> split_triples(const Array& triples, int parts, uint64_t seed) {
  const int64_t n = triples.rows();
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  Rng rng(seed, 77);
  for (int64_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const Array shuffled = triples.gather_rows(order.data(), n);
  std::vector<Array> shares;
  for (int p = 0; p < parts; ++p) shares.push_back(shuffled.slice_rows(n * p / parts, n * (p + 1) / parts));
  return shares;
}

std::vector<std::string> read_names_file(const std::string& path) {
  std::vector<std::string> names;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names;
}

// The triples stored with this machine's partition (the in-edges of the
// entities it owns: `tessera kge partition` keeps each triple with its
// tail), in partition IDs, and this trainer's contiguous share of them.
Array local_triples(distributed::Context& ctx) {
  store::PartitionStore& part = ctx.local();
  const std::string etype = ctx.config().etypes.at(0);
  store::LocalTensor& relation = part.get(store::edge_tensor_name(etype, kRelationField));
  const int64_t* indptr = part.indptr().data<int64_t>();
  const int64_t* indices = part.indices().data<int64_t>();
  const int64_t num_edges = indptr[part.num_nodes()];
  const int64_t first = num_edges * ctx.env().trainer_id / ctx.env().num_trainers;
  const int64_t last = num_edges * (ctx.env().trainer_id + 1) / ctx.env().num_trainers;
  Array out = Array::zeros(DType::kInt64, {last - first, 3});
  int64_t* o = out.data<int64_t>();
  const Array& rel = relation.rows;
  for (int64_t v = 0, pos = 0; v < part.num_nodes(); ++v)
    for (; pos < indptr[v + 1]; ++pos) {
      if (pos < first || pos >= last) continue;
      const int64_t eid = part.eids_are_positions() ? part.first_edge() + pos : part.eids().data<int64_t>()[pos];
      const int64_t row = eid - relation.first_id;
      const int64_t r = rel.dtype() == DType::kInt64 ? rel.data<int64_t>()[row] : rel.data<int32_t>()[row];
      int64_t* t = o + 3 * (pos - first);
      t[0] = indices[pos];
      t[1] = r;
      t[2] = part.first_node() + v;
    }
  return out;
}

// This trainer's share of all triples, read through the servers: for
// trainers on client machines (server-client mode), and for jobs where some
// machine runs no trainer, whose triples the local split would leave out.
// There is no locality to keep, so the shares are scattered over the edge
// IDs, which run in tail order, as one machine's worker shares are shuffled:
// with contiguous shares each trainer would own a block of tail entities
// (kinship DistMult, 2 client trainers, test MRR over seeds 1 and 2: 0.460
// contiguous, 0.475 scattered; one machine with 2 workers: 0.477).
Array triples_from_servers(distributed::Context& ctx) {
  const distributed::DistGraph graph(ctx);
  const distributed::DistTensor relation =
      distributed::DistTensor::open(ctx, store::edge_tensor_name(ctx.config().etypes.at(0), kRelationField));
  const int64_t num_edges = graph.num_edges();
  // i -> i * stride mod num_edges is a permutation when they are coprime.
  int64_t stride = static_cast<int64_t>(0.6180339887 * static_cast<double>(num_edges)) | 1;
  while (num_edges > 1 && std::gcd(stride, num_edges) != 1) stride += 2;
  const int64_t first = num_edges * ctx.rank() / ctx.world_size();
  const int64_t last = num_edges * (ctx.rank() + 1) / ctx.world_size();
  Array out = Array::zeros(DType::kInt64, {last - first, 3});
  int64_t* o = out.data<int64_t>();
  distributed::for_each_id_chunk(first, last, [&](int64_t chunk_first, const std::vector<int64_t>& positions) {
    std::vector<int64_t> eids(positions.size());
    for (size_t i = 0; i < eids.size(); ++i)
      eids[i] = static_cast<int64_t>(static_cast<__int128>(positions[i]) * stride % num_edges);
    const auto [src, dst] = graph.find_edges(eids);
    const Array rel = relation.pull(eids);
    for (size_t i = 0; i < eids.size(); ++i) {
      int64_t* t = o + 3 * (chunk_first - first + static_cast<int64_t>(i));
      t[0] = src[i];
      t[1] = rel.dtype() == DType::kInt64 ? rel.data<int64_t>()[i] : rel.data<int32_t>()[i];
      t[2] = dst[i];
    }
  });
  return out;
}

// Every trainer's triples (int64 [n x 3]), in rank order.
Array gather_triples(distributed::Context& ctx, const Array& mine) {
  const std::vector<int64_t> flat(mine.data<int64_t>(), mine.data<int64_t>() + mine.numel());
  std::vector<int64_t> all;
  for (const auto& part : ctx.collectives().all_gather(flat)) all.insert(all.end(), part.begin(), part.end());
  Array out = Array::zeros(DType::kInt64, {static_cast<int64_t>(all.size() / 3), 3});
  std::copy(all.begin(), all.end(), out.data<int64_t>());
  return out;
}

// Every trainer's triples, gathered and mapped to original entity IDs.
Array gather_original_triples(distributed::Context& ctx, const Array& mine) {
  const distributed::DistTensor orig = distributed::DistTensor::open(ctx, "node/" + std::string(kEntityType) + "/_ORIG_ID");
  std::vector<int64_t> ends(2 * mine.rows());
  for (int64_t i = 0; i < mine.rows(); ++i) {
    ends[2 * i] = triple(mine, i)[0];
    ends[2 * i + 1] = triple(mine, i)[2];
  }
  const Array original = orig.pull(ends);
  Array mapped = Array::zeros(DType::kInt64, {mine.rows(), 3});
  int64_t* m = mapped.data<int64_t>();
  for (int64_t i = 0; i < mine.rows(); ++i) {
    m[3 * i] = original.data<int64_t>()[2 * i];
    m[3 * i + 1] = triple(mine, i)[1];
    m[3 * i + 2] = original.data<int64_t>()[2 * i + 1];
  }
  return gather_triples(ctx, mapped);
}

KnowledgeGraph distributed_graph(distributed::Context& ctx, const KgeOptions& o) {
  const PartitionConfig& c = ctx.config();
  if (c.ntypes.size() != 1 || c.ntypes[0] != kEntityType || c.etypes.size() != 1)
    fail("{}: not a partitioned knowledge graph (expected one node type '{}' and one edge type; "
         "partition with `tessera kge partition`)", c.graph_name, kEntityType);
  KnowledgeGraph kg;
  kg.name = o.dataset.empty() ? c.graph_name : o.dataset;
  kg.num_entities = c.num_nodes;
  for (auto [key, dst] : {std::pair{"valid_triples", &kg.valid}, {"test_triples", &kg.test}}) {
    auto it = c.extra.find(key);
    *dst = it == c.extra.end() ? Array::zeros(DType::kInt64, {0, 3})
                               : read_npy_checked(c.path(it->second), DType::kInt64, 2, key);
  }
  auto names = c.node_names.find(kEntityType);
  if (names != c.node_names.end()) kg.entity_names = read_names_file(c.path(names->second));
  if (!c.relation_names.empty()) kg.relation_names = read_names_file(c.path(c.relation_names));
  kg.train = ctx.standalone() || ctx.env().trainers_cover_partitions() ? local_triples(ctx) : triples_from_servers(ctx);
  std::vector<int64_t> max_relation{static_cast<int64_t>(kg.relation_names.size()) - 1};
  for (const Array* a : {&kg.train, &kg.valid, &kg.test})
    for (int64_t i = 0; i < a->rows(); ++i) max_relation[0] = std::max(max_relation[0], triple(*a, i)[1]);
  int64_t top = max_relation[0];
  for (const auto& v : ctx.collectives().all_gather(max_relation)) top = std::max(top, v[0]);
  kg.num_relations = top + 1;
  return kg;
}

}  // namespace

void KgeJob::sync_relations() {
  if (!ctx || world_size() == 1) return;
  torch::Tensor weights = relations->view() - synced_relations_;
  torch::Tensor state = relations->read_state() - synced_relation_state_;
  ctx->collectives().all_reduce_sum(weights.data_ptr<float>(), weights.numel());
  ctx->collectives().all_reduce_sum(state.data_ptr<float>(), state.numel());
  // Each replica counted its own squares world_size times (set_replicas).
  state.div_(relations->state_weight());
  relations->write_all(weights.add_(synced_relations_), state.add_(synced_relation_state_));
  mark_relations_synced();
}

void KgeJob::mark_relations_synced() {
  synced_relations_ = relations->view().clone();
  synced_relation_state_ = relations->read_state().clone();
}

void KgeJob::broadcast_relations() {
  if (!ctx || world_size() == 1) return;
  torch::Tensor weights = relations->view();
  torch::Tensor state = relations->read_state();
  ctx->collectives().broadcast(weights.data_ptr<float>(), weights.numel(), 0);
  ctx->collectives().broadcast(state.data_ptr<float>(), state.numel(), 0);
  relations->write_all(weights.clone(), state);
  mark_relations_synced();
}

void KgeJob::barrier() {
  if (ctx) ctx->barrier();
}

ScoreOptions score_options(const KgeOptions& o) {
  return {parse_model(o.model_name), o.hidden_dim, o.gamma, o.double_ent, o.double_rel};
}

sampling::TripleSamplerOptions sampler_options(const KgeOptions& o, int64_t num_entities) {
  return {o.batch_size, o.neg_sample_size, o.neg_chunk_size, o.neg_deg_sample, num_entities,
          scores_all_entities(o)};
}

bool scores_all_entities(const KgeOptions& o) { return o.train_mode == "1vsAll" || o.train_mode == "KvsAll"; }

int64_t relation_sync_interval(const KgeOptions& o) {
  if (o.force_sync_interval > 0) return o.force_sync_interval;
  return scores_all_entities(o) ? 1 : 10;
}

bool runs_distributed(const KgeOptions& o) { return !o.part_config.empty() || std::getenv("TESSERA_ROLE") != nullptr; }

KgeJob open_kge_job(const KgeOptions& o, const ScoreFunction& score) {
  KgeJob job;
  const bool distributed = runs_distributed(o);
  if (distributed) {
    distributed::InitOptions init;
    init.num_threads = o.num_thread;
    job.ctx = distributed::initialize(init);  // servers serve and exit inside
    if (job.ctx->standalone() && !o.part_config.empty())
      fail("--part_config needs `tessera launch` (distributed); standalone runs read --data_path directly");
    job.kg = distributed_graph(*job.ctx, o);
    job.known_train = gather_original_triples(*job.ctx, job.kg.train);
    job.worker_triples = {job.kg.train};
    if (scores_all_entities(o)) {
      // Every entity is a candidate of every query, so a trainer gains nothing
      // from its partition's triples, and they are a biased sample (METIS keeps
      // neighbourhoods together): trained on them, 2-machine 1vsAll ended 0.06
      // test MRR below one machine on kinship. Each trainer takes a random
      // share of all of them instead (KvsAll: of the queries of all of them,
      // kge_task.cc, since a query needs every answer).
      job.kg.train = gather_triples(*job.ctx, job.kg.train);
      job.worker_triples = {split_triples(job.kg.train, job.world_size(), o.seed)[job.rank()]};
    }
  } else {
    job.kg = read_knowledge_graph({o.data_path, o.dataset, o.format, o.data_files, o.delimiter});
    job.worker_triples = split_triples(job.kg.train, o.num_proc, o.seed);
    job.known_train = job.kg.train;
  }
  if (job.kg.train.rows() == 0) fail("{}: no training triples", job.kg.name);
  const double range = (o.gamma + 2.0) / static_cast<double>(o.hidden_dim);
  const store::SparseOptimizer optimizer = kge_optimizer(o.optimizer);
  if (distributed) {
    job.entities = std::make_unique<ServerTable>(*job.ctx, "kge-entity", score.entity_dim(),
                                                 job.ctx->book().node_policy(0), uniform_init(range, o.seed), o.lr,
                                                 optimizer);
  } else {
    job.entities = std::make_unique<LocalTable>("kge-entity", job.kg.num_entities, score.entity_dim(),
                                                uniform_init(range, o.seed), o.lr, optimizer);
  }
  // --reciprocal: the inverse relations' rows after the relations'.
  const int64_t relation_rows = job.kg.num_relations * (o.reciprocal ? 2 : 1);
  job.relations = std::make_unique<LocalTable>("kge-relation", relation_rows, score.relation_dim(),
                                               uniform_init(range, o.seed + 1), o.lr, optimizer);
  if (o.model_name == "TransR") {
    // DGL-KE draws the projection matrices from U(-1, 1).
    const int64_t d = o.hidden_dim;
    torch::manual_seed(o.seed + 2);
    job.relations->view().narrow(1, d, d * d).uniform_(-1, 1);
  }
  if (distributed) job.relations->set_replicas(job.world_size());
  job.mark_relations_synced();  // every trainer drew the same rows
  // 1vsAll's and KvsAll's dropout draws come from libtorch's generator:
  // seeded, so that --seed repeats a run; each trainer its own stream.
  torch::manual_seed(o.seed + 3 + 7919 * static_cast<uint64_t>(job.rank()));
  return job;
}

}  // namespace tessera::kge
