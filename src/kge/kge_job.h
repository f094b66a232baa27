// What a KGE run stands on, standalone or distributed: the knowledge graph
// (in distributed runs, this trainer's share of the training triples plus
// the validation and test triples), the workers' triples, the triples an
// evaluation filters, and the entity and relation tables.
//
// Distributed runs train in the partition's entity IDs (those the servers
// shard by) and evaluate in original IDs, so saved tables, names and the
// validation / test files all agree with the input.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <memory>
#include <vector>

#include "embedding_table.h"
#include "nn/kge/score_function.h"
#include "sampling/triple_sampler.h"
#include "tessera/distributed/context.h"
#include "tessera/kge/kge_train.h"
#include "tessera/kge/knowledge_graph.h"

namespace tessera::kge {

struct KgeJob {
  std::unique_ptr<distributed::Context> ctx;  // null when standalone
  KnowledgeGraph kg;                    // train: this process's triples (partition IDs when distributed)
  std::vector<Array> worker_triples;    // one share per worker thread
  Array known_train;                    // every training triple in original IDs, for filtering
  std::unique_ptr<EmbeddingTable> entities;
  std::unique_ptr<LocalTable> relations;

  bool distributed() const { return ctx != nullptr; }
  int rank() const { return ctx ? ctx->rank() : 0; }
  int world_size() const { return ctx ? ctx->world_size() : 1; }
  bool logs() const { return rank() == 0; }
  // Brings the relation replicas together: the common point of the last
  // sync plus the sum of every trainer's change since (weights and Adagrad
  // sums), i.e. every update a shared table would have received. Averaging
  // the replicas instead would halve each relation step. Between syncs a
  // replica's Adagrad sums count its own squared gradients world_size times
  // (its estimate of the shared sums): counted once, every trainer stepped
  // as if alone, up to sqrt(world_size) too far, and the merged relations
  // ended ~0.01 test MRR below one machine's on kinship. (Adam's moments and
  // step counts count once, so the merge averages their changes.)
  void sync_relations();
  // Trainer 0's relation replica (weights and optimizer state) everywhere.
  void broadcast_relations();
  // Records the replica as the common point the next sync starts from.
  void mark_relations_synced();
  void barrier();

 private:
  torch::Tensor synced_relations_, synced_relation_state_;
};

// The score function's and the triple sampler's options from the flags
// (validate() checks the sampler's through the same function).
ScoreOptions score_options(const KgeOptions& options);
sampling::TripleSamplerOptions sampler_options(const KgeOptions& options, int64_t num_entities);

// Whether the run trains under `tessera launch` (--part_config, or a role
// the launcher set) rather than standalone.
bool runs_distributed(const KgeOptions& options);
// --train_mode 1vsAll or KvsAll: every entity a candidate (AllEntitiesStep).
bool scores_all_entities(const KgeOptions& options);
// Steps between merges of a distributed run's relation replicas: the
// flag's, or by default 10 with negative sampling and 1 with 1vsAll / KvsAll,
// whose every query steps its relation row: merged every 10 steps, kinship's
// 2-machine 1vsAll ended 0.03 test MRR below one machine (every 1,000: 0.08),
// merged every step level with it.
int64_t relation_sync_interval(const KgeOptions& options);

// Reads the data (or joins the job) and creates the tables as DGL-KE
// initialises them: uniform in +-(gamma + 2) / hidden_dim.
KgeJob open_kge_job(const KgeOptions& options, const ScoreFunction& score);

}  // namespace tessera::kge
