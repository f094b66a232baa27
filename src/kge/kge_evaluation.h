// How a KGE run measures itself: the share of the validation or test
// triples to rank (--eval_percent), ranking them across the trainers, and
// the metrics as a record and as a line (DGL-KE's MRR, MR, Hits@1/3/10).
//
// Private header: it includes libtorch through the job.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kge_job.h"
#include "ranker.h"

namespace tessera::kge {

// --num_thread, or the cores split between --num_proc workers.
int threads_per_worker(const KgeOptions& options);

// The first --eval_percent of a seeded shuffle of `triples`, as DGL-KE samples.
Array eval_subset(const Array& triples, double percent, uint64_t seed);

// Ranks this trainer's share of `triples`; the sums of every trainer
// (collective when distributed). The workers are idle meanwhile: ranking
// gets the threads of --num_test_proc of them (DGL-KE's test processes),
// all of them by default.
RankSums evaluate_triples(KgeJob& job, const Array& triples, const ScoreFunction& score, const KnownTriples& known,
                          const KgeOptions& options);

// {prefix}_mrr, _mr, _hits@1, _hits@3, _hits@10 and _queries.
nlohmann::json metrics_json(const RankSums& sums, const std::string& prefix);
// "[prefix] MRR 0.4853  MR 3.1  Hits@1 ...".
std::string metrics_line(const nlohmann::json& metrics, const std::string& prefix);

}  // namespace tessera::kge
