// The servers' half of 1vsAll / KvsAll training with the entity table on
// the servers (docs/design.md, "Every entity a candidate, on the servers"):
// each partition's server scores a batch's queries against its own shard of
// the entity table and returns only what the trainer's softmax needs, so
// that what crosses the network grows with the batch (queries x d per
// server), not with the entities.
//
// One step of a trainer is three requests to each partition's server, sent
// in this order on the trainer's one connection (a server answers a
// connection's requests in order):
//   kShardScores     the queries Q [n x d] -> per query, over the shard: the
//                    highest score, the sum of exp(score - highest), the sum
//                    of the query's answers' scores and the sum of all scores
//   kShardGradients  per query the batch's log-sum-exp and target weights ->
//                    the shard's share of dQ [n x d]; the shard's own
//                    gradient dS^T Q stays on the server
//   kShardStep       the batch's rows of this shard and their gradients (the
//                    queries' anchors, the penalty) -> added to the kept
//                    gradient, then one Adagrad step (the table's: row-wise
//                    or element-wise) on every row of the shard: the same
//                    single step a standalone table takes
// Between them the server keeps the trainer's scores (its session, one per
// trainer rank); a request out of this order is an error reply.
//
// Internal header: the request types; handlers in shard_scores_service.cc,
// the trainer's side in sharded_candidates.h.
#pragma once

#include "net/message.h"

namespace tessera::kge {

// Header name: the entity tensor; iarg: the trainer's rank; fargs[0]: the
// candidates' dropout probability; fargs[1]: 1 when the trainer smooths its
// labels (the sum of all scores is then needed). Shape [n, d]. Frames: Q
// float32 [n x d]; target offsets int64 [n + 1]; targets int64 (partition
// IDs, every server's: each takes its own); the dropout draw's seed int64
// [1]. -> reply: float64 [n x 4] (highest, sum of exp, answers' sum, sum).
constexpr net::RequestType kShardScores = 23;
// iarg: the rank; fargs[0]: the loss's scale (1 / the batch's queries).
// Frames: float32 [n x 3] (log-sum-exp, answer weight, uniform weight).
// -> reply: float32 [n x d], the shard's share of dQ.
constexpr net::RequestType kShardGradients = 24;
// iarg: the rank; fargs[0]: lr, fargs[1]: eps, fargs[2]: the Adagrad
// (store::SparseOptimizer kRowAdagrad or kAdagrad). Frames: the shard's
// local row offsets int64 [k] (unique), their gradients float32 [k x d].
constexpr net::RequestType kShardStep = 25;

}  // namespace tessera::kge
