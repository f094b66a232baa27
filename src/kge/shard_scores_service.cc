#include "shard_scores_service.h"

#include <torch/torch.h>

#include <limits>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "all_entities_step.h"
#include "embedding_table.h"
#include "nn/relu_dropout_kernels.h"
#include "server/server_state.h"
#include "tessera/base/error.h"
#include "tessera/store/sparse_step.h"

namespace tessera::kge {
namespace {

using net::ProtocolError;

// What a server keeps of one trainer's step between its three requests.
struct Session {
  enum class Stage { kIdle, kScored, kDifferentiated };
  Stage stage = Stage::kIdle;
  std::string tensor;
  const void* shard = nullptr;  // the tensor's rows when scored: a later request finds them unchanged or fails
  torch::Tensor queries, scores, candidates, dropped_copy, entity_grad;
  std::vector<int64_t> target_offsets, targets;  // targets: local rows of this shard, or -1
  bool dropped = false;
  nn::detail::DropoutDraw draw;  // the shard's own draws (the step's, from the shard's first row)
  std::vector<int64_t> all_rows;
};

// A server answers one request at a time, so its sessions need no lock;
// keyed by the server too, for tests that run several servers in one process.
Session& session(const server::ServerState& state, int64_t rank) {
  static std::map<std::pair<const server::ServerState*, int64_t>, Session> sessions;
  return sessions[{&state, rank}];
}

// The session of the request's trainer, which must be at `stage` (it goes
// back to idle until the request is served); `frames`: the request's count.
Session& session_at(server::ServerState& state, const net::Request& request, Session::Stage stage,
                    size_t frames, const char* what) {
  const int64_t rank = request.header.iarg;
  if (rank < 0 || rank >= state.env.world_size())
    throw ProtocolError(fmt::format("{}: trainer {} is not one of the job's {}", what, rank, state.env.world_size()));
  Session& s = session(state, rank);
  if (s.stage != stage)
    throw ProtocolError(fmt::format("{} of trainer {} arrived out of order (scores, gradients, step)", what, rank));
  s.stage = Session::Stage::kIdle;
  if (request.frames.size() != frames)
    throw ProtocolError(fmt::format("{} needs {} frames, got {}", what, frames, request.frames.size()));
  if (stage != Session::Stage::kIdle) {
    // The shard the session scored must still be there: deleted or made
    // again in between, its rows are gone and the kept products stale.
    store::LocalTensor& t = state.tensor(s.tensor);
    if (t.rows.raw() != s.shard || t.num_rows() != s.candidates.size(0) || t.spec.row_elems() != s.candidates.size(1))
      throw ProtocolError(fmt::format("{}: tensor {} changed since trainer {}'s scores", what, s.tensor, rank));
  }
  return s;
}

torch::Tensor float_frame(const zmq::message_t& frame, int64_t rows, int64_t cols, const char* what) {
  net::check_frame(frame.size(), DType::kFloat32, rows, cols, what);
  return torch::from_blob(const_cast<void*>(frame.data()), {rows, cols}, torch::kFloat32);
}

const int64_t* int_frame(const zmq::message_t& frame, int64_t count, const char* what) {
  net::check_frame(frame.size(), DType::kInt64, count, 1, what);
  return static_cast<const int64_t*>(frame.data());
}

net::Frames serve_scores(server::ServerState& state, net::Request& request, net::Header* reply) {
  const net::Header& h = request.header;
  // Scores start a step from any stage (a trainer that failed mid-step starts over).
  Session& s = session(state, h.iarg);
  s.stage = Session::Stage::kIdle;
  session_at(state, request, Session::Stage::kIdle, 4, "shard scores");
  s.tensor = net::header_name(h);
  store::LocalTensor& t = state.tensor(s.tensor);
  s.shard = t.rows.raw();
  const int64_t d = t.spec.row_elems(), rows = t.num_rows();
  const std::vector<int64_t> shape = net::header_shape(h);
  if (shape.size() != 2 || shape[1] != d)
    throw ProtocolError(fmt::format("shard scores: queries of width {} against rows of {}",
                                    shape.size() == 2 ? shape[1] : -1, d));
  const int64_t n = shape[0];
  s.queries = float_frame(request.frames[0], n, d, "queries").clone();
  const int64_t* offsets = int_frame(request.frames[1], n + 1, "target offsets");
  const int64_t num_targets = static_cast<int64_t>(request.frames[2].size() / sizeof(int64_t));
  const int64_t* targets = int_frame(request.frames[2], num_targets, "targets");
  const auto seed = static_cast<uint64_t>(*int_frame(request.frames[3], 1, "seed"));
  if (offsets[0] != 0 || offsets[n] != num_targets) throw ProtocolError("shard scores: target offsets do not span the targets");
  for (int64_t i = 0; i < n; ++i)
    if (offsets[i + 1] < offsets[i]) throw ProtocolError(fmt::format("shard scores: target offset {} decreases", i + 1));
  s.target_offsets.assign(offsets, offsets + n + 1);
  s.targets.resize(num_targets);
  for (int64_t k = 0; k < num_targets; ++k) {
    const int64_t local = targets[k] - t.first_id;
    s.targets[k] = local >= 0 && local < rows ? local : -1;
  }

  // The candidates: the shard, or its copy with the step's dropout, drawn
  // as a standalone table draws its rows from first_id on.
  const torch::Tensor shard = tensor_of(t.rows).view({rows, d});
  const double p = h.fargs[0];
  if (!(p >= 0 && p < 1)) throw ProtocolError(fmt::format("shard scores: dropout {} is outside [0, 1)", p));
  s.dropped = p > 0;
  s.candidates = shard;
  if (s.dropped) {
    s.draw = query_draw(nn::detail::DropoutDraw::with_seed(seed, p), t.first_id, d);
    if (!s.dropped_copy.defined() || s.dropped_copy.sizes() != shard.sizes()) s.dropped_copy = torch::empty_like(shard);
    nn::detail::dropout_forward(shard.data_ptr<float>(), rows * d, s.draw, s.dropped_copy.data_ptr<float>());
    s.candidates = s.dropped_copy;
  }
  if (!s.scores.defined() || s.scores.size(0) != n || s.scores.size(1) != rows) s.scores = torch::empty({n, rows});
  torch::mm_out(s.scores, s.queries, s.candidates.t());
  // An empty shard has no highest score: -inf, and nothing to sum.
  const torch::Tensor highest =
      rows > 0 ? std::get<0>(s.scores.max(1)) : torch::full({n}, -std::numeric_limits<float>::infinity());
  const torch::Tensor sum_exp = rows > 0 ? (s.scores - highest.unsqueeze(1)).exp_().sum(1) : torch::zeros({n});
  const torch::Tensor all_sum = h.fargs[1] > 0 ? s.scores.sum(1) : torch::zeros({n});
  Array out = Array::uninitialized(DType::kFloat64, {n, 4});
  double* o = out.data<double>();
  const float* sp = s.scores.data_ptr<float>();
  const float *hp = highest.data_ptr<float>(), *ep = sum_exp.data_ptr<float>(), *ap = all_sum.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    double answers = 0;
    for (int64_t k = offsets[i]; k < offsets[i + 1]; ++k)
      if (s.targets[k] >= 0) answers += sp[i * rows + s.targets[k]];
    o[4 * i] = hp[i];
    o[4 * i + 1] = ep[i];
    o[4 * i + 2] = answers;
    o[4 * i + 3] = ap[i];
  }
  s.stage = Session::Stage::kScored;
  net::set_shape(reply, out.dtype(), out.shape());
  net::Frames frames;
  frames.push_back(net::frame_of(out));
  return frames;
}

net::Frames serve_gradients(server::ServerState& state, net::Request& request, net::Header* reply) {
  const net::Header& h = request.header;
  Session& s = session_at(state, request, Session::Stage::kScored, 1, "shard gradients");
  const int64_t n = s.scores.size(0), rows = s.scores.size(1);
  const torch::Tensor w = float_frame(request.frames[0], n, 3, "per-query weights");
  // d loss / d score = (softmax - target) x scale, in place of the scores.
  torch::Tensor& g = s.scores;
  g.sub_(w.select(1, 0).unsqueeze(1)).exp_().sub_(w.select(1, 2).unsqueeze(1));
  float* gp = g.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = s.target_offsets[i]; k < s.target_offsets[i + 1]; ++k)
      if (s.targets[k] >= 0) gp[i * rows + s.targets[k]] -= wp[3 * i + 1];
  g.mul_(static_cast<float>(h.fargs[0]));
  const torch::Tensor dq = torch::mm(g, s.candidates);
  if (!s.entity_grad.defined() || s.entity_grad.sizes() != s.candidates.sizes())
    s.entity_grad = torch::empty_like(s.candidates);
  torch::mm_out(s.entity_grad, g.t(), s.queries);
  // What reached the dropped copy reaches the shard through the same draws.
  if (s.dropped) {
    float* ge = s.entity_grad.data_ptr<float>();
    nn::detail::dropout_backward(ge, s.entity_grad.numel(), s.draw, ge);
  }
  s.stage = Session::Stage::kDifferentiated;
  Array out = array_of(dq);
  net::set_shape(reply, out.dtype(), out.shape());
  net::Frames frames;
  frames.push_back(net::frame_of(out));
  return frames;
}

net::Frames serve_step(server::ServerState& state, net::Request& request, net::Header*) {
  const net::Header& h = request.header;
  Session& s = session_at(state, request, Session::Stage::kDifferentiated, 2, "shard step");
  const int64_t rows = s.entity_grad.size(0), d = s.entity_grad.size(1);
  const auto k = static_cast<int64_t>(request.frames[0].size() / sizeof(int64_t));
  const int64_t* offsets = int_frame(request.frames[0], k, "row offsets");
  const torch::Tensor grads = float_frame(request.frames[1], k, d, "row gradients");
  float* ge = s.entity_grad.data_ptr<float>();
  const float* gp = grads.data_ptr<float>();
  for (int64_t i = 0; i < k; ++i) {
    if (offsets[i] < 0 || offsets[i] >= rows)
      throw ProtocolError(fmt::format("shard step: row {} is outside the shard's {} rows", offsets[i], rows));
    for (int64_t j = 0; j < d; ++j) ge[offsets[i] * d + j] += gp[i * d + j];
  }
  if (static_cast<int64_t>(s.all_rows.size()) != rows) {
    s.all_rows.resize(rows);
    std::iota(s.all_rows.begin(), s.all_rows.end(), 0);
  }
  store::SparseStepParams params;
  // Compared as doubles first: casting an arbitrary one to an integer is undefined.
  const double kind = h.fargs[2];
  if (kind != static_cast<double>(store::SparseOptimizer::kRowAdagrad) &&
      kind != static_cast<double>(store::SparseOptimizer::kAdagrad) &&
      kind != static_cast<double>(store::SparseOptimizer::kAdam))
    throw ProtocolError(fmt::format("shard step: optimizer {} is none of row-wise Adagrad, Adagrad, Adam", kind));
  params.kind = static_cast<store::SparseOptimizer>(static_cast<int64_t>(kind));
  params.lr = h.fargs[0];
  params.eps = h.fargs[1];
  store::apply_sparse_step([&state](const std::string& name) -> store::LocalTensor& { return state.tensor(name); },
                           s.tensor, params, s.all_rows.data(), rows, ge, state.locks);
  return {};
}

[[maybe_unused]] const bool kShardScoreServices =
    server::partition_services().add(kShardScores, "kge: shard scores", serve_scores) &&
    server::partition_services().add(kShardGradients, "kge: shard gradients", serve_gradients) &&
    server::partition_services().add(kShardStep, "kge: shard step", serve_step);

}  // namespace
}  // namespace tessera::kge
