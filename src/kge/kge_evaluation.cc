#include "kge_evaluation.h"

#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tessera/base/random.h"
#include "tessera/base/threads.h"

namespace tessera::kge {

int threads_per_worker(const KgeOptions& o) {
  if (o.num_thread > 0) return o.num_thread;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / o.num_proc);
}

Array eval_subset(const Array& triples, double percent, uint64_t seed) {
  if (percent >= 1) return triples;
  const int64_t n = triples.rows();
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  Rng rng(seed, 91);
  for (int64_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  order.resize(std::max<int64_t>(1, static_cast<int64_t>(n * percent)));
  return triples.gather_rows(order.data(), static_cast<int64_t>(order.size()));
}

RankSums evaluate_triples(KgeJob& job, const Array& triples, const ScoreFunction& score, const KnownTriples& known,
                          const KgeOptions& o) {
  const int worker_threads = threads_per_worker(o);
  set_num_threads((o.num_test_proc > 0 ? o.num_test_proc : o.num_proc) * worker_threads);
  struct Restore {
    int n;
    ~Restore() { set_num_threads(n); }
  } restore{worker_threads};
  job.entities->flush();
  job.barrier();  // every trainer's last pushes have landed
  const torch::Tensor entities = job.entities->read_all();
  const torch::Tensor relations = job.relations->view();
  const int64_t n = triples.rows();
  const int64_t begin = n * job.rank() / job.world_size(), end = n * (job.rank() + 1) / job.world_size();
  RankOptions ro{!o.no_eval_filter, o.neg_sample_size_eval, o.batch_size_eval,
                 o.neg_deg_sample_eval ? &job.known_train : nullptr, o.seed, job.logs(),
                 o.reciprocal ? job.kg.num_relations : 0};
  RankSums mine = rank_triples(triples, begin, end, entities, relations, score, &known, ro);
  if (!job.distributed()) return mine;
  auto a = mine.as_array();
  job.ctx->collectives().all_reduce_sum(a.data(), static_cast<int64_t>(a.size()));
  return RankSums::from_array(a);
}

nlohmann::json metrics_json(const RankSums& s, const std::string& prefix) {
  const double n = std::max(1.0, s.count);
  return {{prefix + "_mrr", s.reciprocal / n}, {prefix + "_mr", s.rank / n},     {prefix + "_hits@1", s.hits1 / n},
          {prefix + "_hits@3", s.hits3 / n},   {prefix + "_hits@10", s.hits10 / n}, {prefix + "_queries", s.count}};
}

std::string metrics_line(const nlohmann::json& m, const std::string& prefix) {
  return fmt::format("[{}] MRR {:.4f}  MR {:.1f}  Hits@1 {:.4f}  Hits@3 {:.4f}  Hits@10 {:.4f}  ({} queries)", prefix,
                     m[prefix + "_mrr"].get<double>(), m[prefix + "_mr"].get<double>(),
                     m[prefix + "_hits@1"].get<double>(), m[prefix + "_hits@3"].get<double>(),
                     m[prefix + "_hits@10"].get<double>(), m[prefix + "_queries"].get<double>());
}

}  // namespace tessera::kge
