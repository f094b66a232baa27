// The program the multi-process tests launch: the same binary runs as server
// or trainer (tessera::distributed::initialize reads the role). Each scenario
// checks its results itself and exits non-zero with a message on the first
// mismatch, so the test asserts on exit codes and log lines.
//
//   dist_worker check     --data DIR --out DIR [--part-config F]   (full API check)
//   dist_worker pull-loop --out DIR                                 (until an error)
//   dist_worker garbage                                (bad messages, garbage_scenario.cc)
//   dist_worker sample    --data DIR --out DIR [--part-config F]   (sampling, sample_scenario.cc)
//   dist_worker hetero-sample --data DIR [--part-config F]  (per-edge-type sampling, hetero_sample_scenario.cc)
//   dist_worker intrude --endpoints tcp://IP:PORT,...       (a foreign process, intrude_scenario.cc)
//   dist_worker service                     (a service registered by a test, service_scenario.cc)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scenarios.h"
#include "job/job_security.h"
#include "net/transport.h"
#include "server/partition_server.h"
#include "server/store_service.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_embedding.h"
#include "tessera/distributed/dist_graph.h"
#include "tessera/distributed/dist_tensor.h"
#include "distributed/kv_client.h"
#include "tessera/distributed/node_split.h"
#include "tessera/io/dataset_io.h"
#include "tessera/io/npy.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"

namespace distributed = tessera::distributed;
using tessera::Array;
using tessera::DType;
using tessera::fail;

namespace {

std::map<std::string, std::string> parse_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

std::vector<int64_t> random_ids(tessera::Rng& rng, int64_t n, int64_t count) {
  std::vector<int64_t> ids(count);
  for (auto& id : ids) id = static_cast<int64_t>(rng.below(n));
  return ids;
}

// `t.pull(ids)` equals the original, unpartitioned `array`'s rows; node i
// is original node orig_of[i].
void expect_pull_matches(const std::string& name, const distributed::DistTensor& t, const Array& array,
                         const int64_t* orig_of, const std::vector<int64_t>& ids) {
  const Array rows = t.pull(ids);
  const size_t rb = array.row_bytes();
  EXPECT_OR_FAIL(rows.row_bytes() == rb, "{}: row bytes {} vs original {}", name, rows.row_bytes(), rb);
  EXPECT_OR_FAIL(rows.rows() == static_cast<int64_t>(ids.size()), "{}: {} rows for {} IDs", name, rows.rows(),
                 ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t src = orig_of[ids[i]];
    EXPECT_OR_FAIL(std::memcmp(static_cast<const char*>(rows.raw()) + i * rb,
                               static_cast<const char*>(array.raw()) + src * rb, rb) == 0,
                   "pull of {} row {} (original {}) differs from the dataset", name, ids[i], src);
  }
}

// Pulls random batches of every node array and compares them with the
// original, unpartitioned dataset through the ID map, pulled once for all
// nodes: batches of IDs anywhere (local rows and chunked requests), and
// batches of one remote partition's IDs only, whose reply frame becomes the
// result (1 and 3 rows give frames that ZeroMQ may place unaligned, which
// are copied instead).
void check_pulls(distributed::Context& ctx, distributed::DistGraph& g, const tessera::Dataset& original) {
  const auto& nt = original.node_types.at(0);
  const int64_t n = g.num_nodes();
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const distributed::DistTensor orig = g.ndata("_ORIG_ID");
  const Array orig_of = orig.pull(all);
  std::vector<int64_t> seen(orig_of.data<int64_t>(), orig_of.data<int64_t>() + n);
  std::sort(seen.begin(), seen.end());
  EXPECT_OR_FAIL(seen == all, "_ORIG_ID is not a permutation of the {} original nodes", n);
  const tessera::IdSpace& space = ctx.book().space("node:_N");
  tessera::Rng rng(17, ctx.rank());
  for (const auto& [name, array] : nt.data) {
    const distributed::DistTensor t = g.ndata(name);
    for (int batch = 0; batch < 5; ++batch)
      expect_pull_matches(name, t, array, orig_of.data<int64_t>(), random_ids(rng, n, 1000));
    for (int p = 0; p < ctx.num_parts(); ++p) {
      if (p == ctx.local_part()) continue;
      for (const int64_t size : {1, 3, 1000}) {
        std::vector<int64_t> ids = random_ids(rng, space.starts[p + 1] - space.starts[p], size);
        for (int64_t& id : ids) id += space.starts[p];
        expect_pull_matches(name, t, array, orig_of.data<int64_t>(), ids);
      }
    }
  }
  // Masks: pulled train_mask matches the original training IDs.
  std::set<int64_t> train(nt.train.data<int64_t>(), nt.train.data<int64_t>() + nt.train.numel());
  const Array mask = g.ndata("train_mask").pull(all);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_OR_FAIL((mask.data<bool>()[i] != 0) == (train.count(orig_of.data<int64_t>()[i]) > 0), "train_mask of {}",
                   i);
  // An ID outside the space, negative or past the end, is an error naming it.
  for (const int64_t bad : {int64_t{-1}, n}) {
    std::string error;
    try {
      (void)orig.pull(std::vector<int64_t>{0, bad});
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_OR_FAIL(error.find(fmt::format("ID {} is out of range", bad)) != std::string::npos,
                   "pull of ID {} gave '{}', expected 'ID {} is out of range'", bad, error, bad);
  }
  fmt::print("rank {}: pulls match the dataset\n", ctx.rank());
}

void check_structure(distributed::Context& ctx, distributed::DistGraph& g, const tessera::Dataset& original) {
  const auto& et = original.edge_types.at(0);
  tessera::Rng rng(29, ctx.rank());
  const std::vector<int64_t> eids = random_ids(rng, g.num_edges(), 500);
  const auto [src, dst] = g.find_edges(eids);
  const Array orig_e = g.edata("_ORIG_ID").pull(eids);
  const distributed::DistTensor orig_n = g.ndata("_ORIG_ID");
  const Array os = orig_n.pull(src), od = orig_n.pull(dst);
  for (size_t i = 0; i < eids.size(); ++i) {
    const int64_t e = orig_e.data<int64_t>()[i];
    EXPECT_OR_FAIL(et.src.data<int64_t>()[e] == os.data<int64_t>()[i] && et.dst.data<int64_t>()[e] == od.data<int64_t>()[i],
                   "find_edges({}) gives ({}, {}) but original edge {} is ({}, {})", eids[i], os.data<int64_t>()[i],
                   od.data<int64_t>()[i], e, et.src.data<int64_t>()[e], et.dst.data<int64_t>()[e]);
  }
  std::vector<int64_t> in_deg_orig(g.num_nodes(), 0);
  for (int64_t i = 0; i < et.count(); ++i) ++in_deg_orig[et.dst.data<int64_t>()[i]];
  const std::vector<int64_t> nodes = random_ids(rng, g.num_nodes(), 500);
  const std::vector<int64_t> deg = g.in_degrees(nodes);
  const Array on = orig_n.pull(nodes);
  for (size_t i = 0; i < nodes.size(); ++i)
    EXPECT_OR_FAIL(deg[i] == in_deg_orig[on.data<int64_t>()[i]], "in-degree of {}: {} vs {}", nodes[i], deg[i],
                   in_deg_orig[on.data<int64_t>()[i]]);
  fmt::print("rank {}: find_edges and in_degrees match the dataset\n", ctx.rank());
}

// Every trainer adds to the same rows at once; no update may be lost.
void check_concurrent_add(distributed::Context& ctx, distributed::DistGraph& g) {
  distributed::DistTensor acc(ctx, "acc", DType::kFloat32, {4}, "node:_N");
  const int64_t n = g.num_nodes();
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 50; ++i) ids.push_back(i * (n / 50));  // rows on every partition
  ids.push_back(ids[0]);                                          // a repeat within one push
  const int rounds = 40;
  for (int r = 0; r < rounds; ++r) {
    Array ones = Array::zeros(DType::kFloat32, {static_cast<int64_t>(ids.size()), 4});
    for (int64_t k = 0; k < ones.numel(); ++k) ones.data<float>()[k] = static_cast<float>(ctx.rank() + 1);
    acc.push(ids, ones, tessera::store::PushMode::kAdd);
  }
  ctx.barrier();
  const Array result = acc.pull(ids);
  const int w = ctx.world_size();
  const float per_push = static_cast<float>(w * (w + 1) / 2 * rounds);
  for (size_t i = 0; i < ids.size(); ++i) {
    const float expected = (ids[i] == ids[0] ? 2 : 1) * per_push;
    EXPECT_OR_FAIL(result.data<float>()[i * 4] == expected, "row {} holds {} after concurrent adds, expected {}",
                   ids[i], result.data<float>()[i * 4], expected);
  }
  ctx.barrier();
  fmt::print("rank {}: concurrent adds lost nothing ({} trainers x {} rounds)\n", ctx.rank(), w, rounds);
}

// Sparse optimizers against torch.optim on a dense copy of the touched rows.
template <typename Optimizer, typename TorchOptimizer, typename Options>
void check_optimizer(distributed::Context& ctx, distributed::DistGraph& g, const char* label, Options options,
                     std::function<Optimizer(distributed::Context&, std::vector<const distributed::DistEmbedding*>)> make) {
  const int64_t dim = 8;
  distributed::DistEmbedding emb(ctx, std::string("emb_") + label, dim, "node:_N",
                          tessera::store::Initializer{"uniform", -1, 1, 7});
  Optimizer opt = make(ctx, {&emb});
  // Each trainer owns a disjoint set of rows spread over all partitions
  // (disjoint rows make concurrent steps commute).
  const int64_t n = g.num_nodes();
  std::vector<int64_t> rows;
  for (int64_t i = ctx.rank(); i < n; i += std::max<int64_t>(1, n / 64) * ctx.world_size() + 1) rows.push_back(i);
  const Array start = emb.lookup(rows.data(), static_cast<int64_t>(rows.size()));
  torch::Tensor ref = torch::from_blob(const_cast<void*>(start.raw()), {static_cast<int64_t>(rows.size()), dim},
                                       torch::kFloat32).clone().requires_grad_(true);
  TorchOptimizer torch_opt({ref}, options);
  tessera::Rng rng(99, ctx.rank());
  for (int step = 0; step < 10; ++step) {
    // The batch lists every row twice with half gradients: coalescing must sum them.
    std::vector<int64_t> ids(rows);
    ids.insert(ids.end(), rows.begin(), rows.end());
    std::vector<float> grads(ids.size() * dim);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int64_t d = 0; d < dim; ++d) {
        const float g2 = static_cast<float>(rng.normal());
        grads[i * dim + d] = g2 / 2;
        grads[(i + rows.size()) * dim + d] = g2 / 2;
      }
    opt.step(emb, ids.data(), static_cast<int64_t>(ids.size()), grads.data());
    torch::Tensor full = torch::from_blob(grads.data(), {static_cast<int64_t>(ids.size()), dim}, torch::kFloat32);
    ref.mutable_grad() = full.slice(0, 0, rows.size()) + full.slice(0, rows.size());
    torch_opt.step();
  }
  const Array got = emb.lookup(rows.data(), static_cast<int64_t>(rows.size()));
  const float* want = ref.data_ptr<float>();
  double worst = 0;
  for (int64_t k = 0; k < got.numel(); ++k) worst = std::max(worst, std::fabs(double(got.data<float>()[k]) - want[k]));
  EXPECT_OR_FAIL(worst <= 1e-5, "{}: max difference from torch.optim is {}", label, worst);
  ctx.barrier();
  fmt::print("rank {}: {} matches torch.optim (max difference {:.2e})\n", ctx.rank(), label, worst);
}

void check_all_reduce(distributed::Context& ctx) {
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((ctx.rank() + 1) * i);
  ctx.collectives().all_reduce_sum(v.data(), static_cast<int64_t>(v.size()));
  const int w = ctx.world_size();
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_OR_FAIL(v[i] == static_cast<float>(w * (w + 1) / 2 * i), "all-reduce element {}: {}", i, v[i]);
  const auto gathered = ctx.collectives().all_gather(std::vector<int64_t>(ctx.rank() + 1, ctx.rank()));
  for (int r = 0; r < w; ++r)
    EXPECT_OR_FAIL(gathered[r] == std::vector<int64_t>(r + 1, r), "all-gather from rank {}", r);
  fmt::print("rank {}: all-reduce and all-gather over {} trainers are correct\n", ctx.rank(), w);
}

void check_split(distributed::Context& ctx, distributed::DistGraph& g) {
  const distributed::DistTensor mask = g.ndata("train_mask");
  for (bool even : {true, false}) {
    const std::vector<int64_t> mine = distributed::node_split(ctx, mask, even);
    const auto all = ctx.collectives().all_gather(mine);
    std::set<int64_t> seen;
    size_t total = 0, smallest = SIZE_MAX, largest = 0;
    for (const auto& part : all) {
      seen.insert(part.begin(), part.end());
      total += part.size();
      smallest = std::min(smallest, part.size());
      largest = std::max(largest, part.size());
    }
    std::vector<int64_t> ids(g.num_nodes());
    std::iota(ids.begin(), ids.end(), 0);
    const Array m = mask.pull(ids);
    const size_t expected = std::count(m.data<bool>(), m.data<bool>() + m.numel(), true);
    EXPECT_OR_FAIL(seen.size() == total && total == expected, "node_split: {} distinct of {} given, {} training nodes",
                   seen.size(), total, expected);
    if (even) EXPECT_OR_FAIL(largest - smallest <= 1, "force_even split sizes {}..{}", smallest, largest);
    const tessera::IdSpace& space = ctx.book().space("node:_N");
    size_t local = 0;
    for (int64_t id : mine) local += space.owner(id) == ctx.local_part();
    // Trainers on client machines (server-client mode) have no machine's IDs to prefer.
    if (!even && ctx.env().trainers_cover_partitions()) EXPECT_OR_FAIL(local == mine.size(), "non-even split gave {} of {} IDs on another machine",
                              mine.size() - local, mine.size());
    fmt::print("rank {}: node_split(force_even={}) gives {} IDs, {} local\n", ctx.rank(), even, mine.size(), local);
  }
}

// save() writes rows in original IDs; load() puts them back where they were.
void check_save_load(distributed::Context& ctx, distributed::DistGraph& g, const std::string& out) {
  distributed::DistEmbedding emb(ctx, "saved", 3, "node:_N", tessera::store::Initializer{"uniform", -1, 1, 11});
  distributed::DistEmbedding copy(ctx, "loaded", 3, "node:_N");
  const std::string path = out + "/emb.npy";
  if (ctx.rank() == 0) {
    emb.save(path);
    copy.load(path);
  }
  ctx.barrier();
  const int64_t n = g.num_nodes();
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const Array want = emb.lookup(all.data(), n), got = copy.lookup(all.data(), n);
  const Array orig = g.ndata("_ORIG_ID").pull(all);
  const Array file = tessera::read_npy(path);
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      const float w = want.data<float>()[i * 3 + d];
      EXPECT_OR_FAIL(got.data<float>()[i * 3 + d] == w, "loaded row {} differs from the saved one", i);
      EXPECT_OR_FAIL(file.data<float>()[orig.data<int64_t>()[i] * 3 + d] == w,
                     "saved file row {} is not node {}'s row", orig.data<int64_t>()[i], i);
    }
  ctx.barrier();
  fmt::print("rank {}: embedding save/load round-trips in original IDs\n", ctx.rank());
}

void check_persistence(distributed::Context& ctx) {
  {
    distributed::DistTensor keep(ctx, "keep", DType::kFloat32, {2}, "node:_N", {"normal", 0, 1, 3}, /*persistent=*/true);
    distributed::DistTensor temp(ctx, "temp", DType::kFloat32, {2}, "node:_N");
    ctx.barrier();
  }
  ctx.barrier();
  const distributed::DistTensor keep = distributed::DistTensor::open(ctx, "keep");
  const Array rows = keep.pull(std::vector<int64_t>{0, 1, 2});
  EXPECT_OR_FAIL(rows.data<float>()[0] != 0.0f, "persistent tensor lost its values");
  bool temp_gone = false;
  try {
    distributed::DistTensor::open(ctx, "temp");
  } catch (const tessera::Error& e) {
    temp_gone = std::string(e.what()).find("no tensor named 'temp'") != std::string::npos;
  }
  EXPECT_OR_FAIL(temp_gone, "a non-persistent tensor outlived its handles");
  ctx.barrier();
  fmt::print("rank {}: persistent tensors survive, others are deleted\n", ctx.rank());
}

// Rows for original IDs 0..k-1, written by rank 0 for the standalone comparison.
void write_original_order_pulls(distributed::Context& ctx, distributed::DistGraph& g, const std::string& out) {
  if (ctx.rank() != 0) return;
  const int64_t n = g.num_nodes();
  std::vector<int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const Array orig = g.ndata("_ORIG_ID").pull(all);
  std::vector<int64_t> by_original(n);
  for (int64_t i = 0; i < n; ++i) by_original[orig.data<int64_t>()[i]] = i;
  tessera::write_npy(out + "/feat-" + (ctx.standalone() ? "standalone" : "distributed") + ".npy",
                     g.ndata("feat").pull(by_original));
}

int run_check(const std::map<std::string, std::string>& flags) {
  auto ctx = initialize_from_flags(flags);
  const tessera::Dataset original = tessera::read_dataset(flags.at("--data"));
  distributed::DistGraph g(*ctx);
  check_pulls(*ctx, g, original);
  check_structure(*ctx, g, original);
  check_all_reduce(*ctx);
  check_split(*ctx, g);
  check_concurrent_add(*ctx, g);
  check_optimizer<distributed::SparseAdagrad, torch::optim::Adagrad>(
      *ctx, g, "adagrad", torch::optim::AdagradOptions(0.1).eps(1e-10),
      [](distributed::Context& c, std::vector<const distributed::DistEmbedding*> e) { return distributed::SparseAdagrad(c, e, 0.1, 1e-10); });
  check_optimizer<distributed::SparseAdam, torch::optim::Adam>(
      *ctx, g, "adam", torch::optim::AdamOptions(0.05).betas({0.9, 0.999}).eps(1e-8),
      [](distributed::Context& c, std::vector<const distributed::DistEmbedding*> e) { return distributed::SparseAdam(c, e, 0.05); });
  check_save_load(*ctx, g, flags.at("--out"));
  check_persistence(*ctx);
  write_original_order_pulls(*ctx, g, flags.at("--out"));
  ctx->finalize();
  fmt::print("rank {}: all checks passed\n", ctx->rank());
  return 0;
}

// Pulls and pushes across all partitions until something fails.
int run_pull_loop(const std::map<std::string, std::string>& flags) {
  auto ctx = distributed::initialize();
  distributed::DistGraph g(*ctx);
  const distributed::DistTensor feat = g.ndata("feat");
  distributed::DistTensor acc(*ctx, "loop_acc", DType::kFloat32, {1}, "node:_N");
  tessera::Rng rng(5, ctx->rank());
  for (int64_t i = 0;; ++i) {
    const std::vector<int64_t> ids = random_ids(rng, g.num_nodes(), 256);
    feat.pull(ids);
    acc.push(ids, Array::zeros(DType::kFloat32, {256, 1}), tessera::store::PushMode::kAdd);
    if (i == 10) {
      std::ofstream(flags.at("--out") + "/pulling-" + std::to_string(ctx->rank())) << "yes\n";
      fmt::print("rank {}: pulling\n", ctx->rank());
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: dist_worker check|pull-loop|garbage|sample|hetero-sample|intrude|service|kge-shards [--flag value ...]\n");
    return 2;
  }
  const std::string scenario = argv[1];
  const auto flags = parse_flags(argc, argv);
  // Servers leave their pid where the fault tests can find it.
  const char* role = std::getenv("TESSERA_ROLE");
  if (role != nullptr && std::string(role) == "server" && flags.count("--out"))
    std::ofstream(fmt::format("{}/server-m{}-s{}.pid", flags.at("--out"), std::getenv("TESSERA_MACHINE_ID"),
                              std::getenv("TESSERA_SERVER_ID")))
        << ::getpid() << "\n";
  try {
    if (scenario == "check") return run_check(flags);
    if (scenario == "pull-loop") return run_pull_loop(flags);
    if (scenario == "garbage") return run_garbage(flags);
    if (scenario == "sample") return run_sample(flags);
    if (scenario == "hetero-sample") return run_hetero_sample(flags);
    if (scenario == "intrude") return run_intrude(flags);
    if (scenario == "service") return run_service(flags);
    if (scenario == "kge-shards") return run_kge_shards(flags);
    fmt::print(stderr, "unknown scenario {}\n", scenario);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dist_worker {}: error: {}\n", scenario, e.what());
    return 1;
  }
}
