#include "sharded_candidates.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "embedding_table.h"
#include "net/transport.h"
#include "shard_scores_service.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace {

int64_t sent_bytes(const std::vector<zmq::message_t>& frames) {
  int64_t total = sizeof(net::Header);
  for (const zmq::message_t& f : frames) total += static_cast<int64_t>(f.size());
  return total;
}

}  // namespace

ShardedCandidates::ShardedCandidates(distributed::Context& ctx, std::string tensor, const std::string& policy,
                                     int64_t dim, store::SparseOptimizer kind)
    : ctx_(&ctx), tensor_(std::move(tensor)), dim_(dim), kind_(kind), starts_(ctx.book().space(policy).starts) {
  for (int p = 0; p + 1 < static_cast<int>(starts_.size()); ++p) servers_.push_back(ctx.server_for(p));
}

int64_t ShardedCandidates::largest_shard() const {
  int64_t most = 0;
  for (size_t p = 0; p + 1 < starts_.size(); ++p) most = std::max(most, starts_[p + 1] - starts_[p]);
  return most;
}

int ShardedCandidates::shard_of(int64_t id) const {
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), id);
  if (id < 0 || it == starts_.end()) fail("1vsAll on the servers: entity {} is outside the table's {} rows", id, starts_.back());
  return static_cast<int>(it - starts_.begin()) - 1;
}

double ShardedCandidates::cross_entropy(const torch::Tensor& queries, const QueryTargets& t, float scale,
                                        double dropout, uint64_t seed, torch::Tensor* query_grad) {
  net::Client& client = ctx_->client();
  const int64_t n = queries.size(0);
  const Array q = array_of(queries);
  std::vector<uint64_t> requests;
  for (size_t p = 0; p < servers_.size(); ++p) {
    net::Header h = net::make_header(kShardScores, 0, tensor_);
    h.iarg = ctx_->rank();
    h.fargs[0] = dropout;
    const std::vector<float>& uniform = *t.uniform_weight;
    h.fargs[1] = std::any_of(uniform.begin(), uniform.begin() + n, [](float u) { return u > 0; }) ? 1 : 0;
    net::set_shape(&h, DType::kFloat32, {n, dim_});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(q));
    frames.push_back(net::frame_of(std::vector<int64_t>(*t.target_offsets)));
    frames.push_back(net::frame_of(std::vector<int64_t>(*t.targets)));
    frames.push_back(net::frame_of(std::vector<int64_t>{static_cast<int64_t>(seed)}));
    bytes_ += sent_bytes(frames);
    requests.push_back(client.send(servers_[p], h, std::move(frames)));
  }
  // The last step's shard steps arrived first on each connection: their replies come with these.
  std::vector<uint64_t> waited = in_flight_;
  in_flight_.clear();
  waited.insert(waited.end(), requests.begin(), requests.end());
  std::vector<net::Reply> replies = client.wait(waited);
  replies.erase(replies.begin(), replies.end() - static_cast<std::ptrdiff_t>(requests.size()));

  // Each query's log-sum-exp over every shard, and its cross-entropy.
  Array weights = Array::uninitialized(DType::kFloat32, {n, 3});
  float* w = weights.data<float>();
  double total = 0;
  std::vector<const double*> parts;
  for (size_t p = 0; p < replies.size(); ++p) {
    bytes_ += sent_bytes(replies[p].frames);
    if (replies[p].frames.size() != 1 || replies[p].frames[0].size() != static_cast<size_t>(n) * 4 * sizeof(double))
      fail("1vsAll on the servers: partition {}'s scores have the wrong size", p);
    parts.push_back(static_cast<const double*>(replies[p].frames[0].data()));
  }
  for (int64_t i = 0; i < n; ++i) {
    double highest = -INFINITY, answers = 0, all = 0;
    for (const double* part : parts) highest = std::max(highest, part[4 * i]);
    double sum_exp = 0;
    for (const double* part : parts) {
      sum_exp += part[4 * i + 1] * std::exp(part[4 * i] - highest);
      answers += part[4 * i + 2];
      all += part[4 * i + 3];
    }
    const double lse = highest + std::log(sum_exp);
    const float answer_weight = (*t.answer_weight)[i], uniform_weight = (*t.uniform_weight)[i];
    total += lse - answer_weight * answers - uniform_weight * all;
    w[3 * i] = static_cast<float>(lse);
    w[3 * i + 1] = answer_weight;
    w[3 * i + 2] = uniform_weight;
  }

  requests.clear();
  for (size_t p = 0; p < servers_.size(); ++p) {
    net::Header h = net::make_header(kShardGradients, 0, tensor_);
    h.iarg = ctx_->rank();
    h.fargs[0] = scale;
    net::set_shape(&h, DType::kFloat32, {n, 3});
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(weights));
    bytes_ += sent_bytes(frames);
    requests.push_back(client.send(servers_[p], h, std::move(frames)));
  }
  replies = client.wait(requests);
  query_grad->zero_();
  for (size_t p = 0; p < replies.size(); ++p) {
    bytes_ += sent_bytes(replies[p].frames);
    if (replies[p].frames.size() != 1 || replies[p].frames[0].size() != static_cast<size_t>(n * dim_) * sizeof(float))
      fail("1vsAll on the servers: partition {}'s query gradients have the wrong size", p);
    query_grad->add_(torch::from_blob(replies[p].frames[0].data(), {n, dim_}, torch::kFloat32));
  }
  return total;
}

void ShardedCandidates::step(const std::vector<int64_t>& ids, const torch::Tensor& grads, double lr) {
  const size_t shards = servers_.size();
  std::vector<std::vector<int64_t>> offsets(shards), at(shards);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int p = shard_of(ids[i]);
    offsets[p].push_back(ids[i] - starts_[p]);
    at[p].push_back(static_cast<int64_t>(i));
  }
  const torch::Tensor g = grads.contiguous();
  for (size_t p = 0; p < shards; ++p) {
    net::Header h = net::make_header(kShardStep, 0, tensor_);
    h.iarg = ctx_->rank();
    h.fargs[0] = lr;
    h.fargs[1] = optimizer_eps(kind_);  // the table's own optimizer's (ServerTable's)
    h.fargs[2] = static_cast<double>(kind_);
    const auto k = static_cast<int64_t>(offsets[p].size());
    const Array rows = array_of(g.index_select(0, torch::from_blob(at[p].data(), {k}, torch::kInt64)));
    std::vector<zmq::message_t> frames;
    frames.push_back(net::frame_of(std::move(offsets[p])));
    frames.push_back(net::frame_of(rows));
    bytes_ += sent_bytes(frames);
    in_flight_.push_back(ctx_->client().send(servers_[p], h, std::move(frames)));
  }
  ++steps_;
}

void ShardedCandidates::flush() {
  if (in_flight_.empty()) return;
  std::vector<uint64_t> requests;
  requests.swap(in_flight_);
  ctx_->client().wait(requests);
}

}  // namespace tessera::kge
