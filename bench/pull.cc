// Pull throughput of DistTensor rows against the machine's physical limits.
// Run under `tessera launch` with 2 machines (see bench/pull.sh): trainer 0
// pulls 100-float rows in batches of 10,000 random IDs from its own
// partition (shared memory, no RPC) and from the other one (ZeroMQ over
// loopback), and measures memcpy bandwidth and a raw loopback TCP stream in
// the same run; also the remote pulls of 2 threads at once, each through its
// own connection, as the data loader issues them, and pulls of IDs from both
// partitions (half local, half remote: the chunked path). Prints one table.

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "net/transport.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/dist_tensor.h"
#include "distributed/kv_client.h"
#include "tessera/base/error.h"
#include "tessera/base/random.h"
#include "tessera/base/timer.h"
#include "wire_bounds.h"

namespace distributed = tessera::distributed;

namespace {

constexpr int64_t kDim = 100;
constexpr int64_t kBatch = 10000;
constexpr int kRepeats = 5;

struct Row {
  std::string what;
  double seconds = 0;
  double rows_per_s = 0;
  double gb_per_s = 0;
};

// Random IDs owned by partition `part`, or by any partition for part -1.
std::vector<int64_t> batch_in(const tessera::IdSpace& space, int part, tessera::Rng& rng) {
  std::vector<int64_t> ids(kBatch);
  const int64_t lo = part < 0 ? 0 : space.starts[part], n = part < 0 ? space.size() : space.starts[part + 1] - lo;
  for (auto& id : ids) id = lo + static_cast<int64_t>(rng.below(n));
  return ids;
}

Row time_pulls(const char* what, const distributed::DistTensor& t, const tessera::IdSpace& space, int part, int batches) {
  tessera::Rng rng(1, part);
  std::vector<std::vector<int64_t>> all;
  for (int b = 0; b < batches; ++b) all.push_back(batch_in(space, part, rng));
  t.pull(all[0]);  // warm up: maps the segment, opens connections
  const tessera::Timer timer;
  for (const auto& ids : all) t.pull(ids);
  const double s = timer.seconds();
  const double rows = static_cast<double>(batches) * kBatch;
  return {what, s, rows / s, rows * kDim * sizeof(float) / s / 1e9};
}

// The same batches pulled by `threads` threads at once, each through its own
// connection (as the data loader's sampler threads do): the rate a trainer
// gets when requests overlap instead of waiting one at a time.
Row time_concurrent_pulls(const char* what, distributed::Context& ctx, const distributed::DistTensor& t,
                          const tessera::IdSpace& space, int part, int batches, int threads) {
  tessera::Rng rng(1, part);
  std::vector<std::vector<int64_t>> all;
  for (int b = 0; b < batches; ++b) all.push_back(batch_in(space, part, rng));
  std::vector<std::unique_ptr<tessera::net::Client>> clients;
  for (int k = 0; k < threads; ++k) {
    clients.push_back(ctx.connect());
    distributed::pull_rows(ctx, clients.back().get(), k, t.spec(), all[0].data(), kBatch);  // warm up
  }
  const tessera::Timer timer;
  std::vector<std::thread> workers;
  for (int k = 0; k < threads; ++k)
    workers.emplace_back([&, k] {
      for (int b = k; b < batches; b += threads)
        distributed::pull_rows(ctx, clients[k].get(), k, t.spec(), all[b].data(), kBatch);
    });
  for (auto& w : workers) w.join();
  const double s = timer.seconds();
  const double rows = static_cast<double>(batches) * kBatch;
  return {what, s, rows / s, rows * kDim * sizeof(float) / s / 1e9};
}

Row median(std::vector<Row> runs) {
  std::sort(runs.begin(), runs.end(), [](const Row& a, const Row& b) { return a.gb_per_s < b.gb_per_s; });
  return runs[runs.size() / 2];
}

// "48% 52% ..." : part[i] / whole[i] for each repeat i.
std::string ratios(const std::vector<Row>& part, const std::vector<Row>& whole) {
  std::string text;
  for (size_t i = 0; i < part.size(); ++i)
    text += fmt::format("{}{:.0f}%", i ? " " : "", 100 * part[i].gb_per_s / whole[i].gb_per_s);
  return text;
}

Row time_memcpy() {
  const size_t bytes = size_t{256} << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);
  const int reps = 8;
  const tessera::Timer timer;
  for (int r = 0; r < reps; ++r) std::memcpy(r % 2 ? a.data() : b.data(), r % 2 ? b.data() : a.data(), bytes);
  const double s = timer.seconds();
  return {"memcpy (1 thread, 256 MiB)", s, 0, static_cast<double>(bytes) * reps / s / 1e9};
}

// One TCP stream over loopback: the most any single connection can carry.
Row time_loopback_tcp() {
  const size_t total = size_t{1} << 30;
  const double gbps = bench::loopback_tcp_gbps(total, size_t{4} << 20);
  return {"raw TCP over loopback (1 stream)", static_cast<double>(total) / gbps / 1e9, 0, gbps};
}

}  // namespace

int main() {
  try {
    auto ctx = distributed::initialize();
    if (ctx->num_parts() < 2) tessera::fail("bench_pull needs 2 partitions (run bench/pull.sh)");
    const tessera::IdSpace& space = ctx->book().space("node:_N");
    distributed::DistTensor t(*ctx, "bench_rows", tessera::DType::kFloat32, {kDim}, "node:_N",
                       tessera::store::Initializer{"uniform", -1, 1, 1});
    if (ctx->rank() == 0) {
      const int local = ctx->local_part(), remote = (local + 1) % ctx->num_parts();
      // Each measurement is repeated, interleaved, and the median reported:
      // on a 2-core host single runs swing by +-30%.
      std::vector<std::vector<Row>> runs(6);
      for (int rep = 0; rep < kRepeats; ++rep) {
        runs[0].push_back(time_memcpy());
        runs[1].push_back(time_pulls("pull, local partition (shared memory)", t, space, local, 100));
        runs[2].push_back(time_loopback_tcp());
        runs[3].push_back(time_pulls("pull, remote partition (ZeroMQ, loopback)", t, space, remote, 50));
        runs[4].push_back(time_concurrent_pulls("pull, remote, 2 threads at once", *ctx, t, space, remote, 50, 2));
        runs[5].push_back(time_pulls("pull, IDs of both partitions", t, space, -1, 50));
      }
      std::vector<Row> rows;
      for (auto& r : runs) rows.push_back(median(r));
      fmt::print("\n{} rows of {} floats per partition; batches of {} random IDs; median of {} runs\n\n",
                 space.starts[1], kDim, kBatch, kRepeats);
      fmt::print("| {:<42} | {:>8} | {:>12} | {:>8} |\n", "measurement", "time s", "rows/s", "GB/s");
      fmt::print("|{:-<44}|{:->10}|{:->14}|{:->10}|\n", "", "", "", "");
      for (const Row& r : rows)
        fmt::print("| {:<42} | {:>8.3f} | {:>12} | {:>8.2f} |\n", r.what, r.seconds,
                   r.rows_per_s > 0 ? fmt::format("{:.3g}", r.rows_per_s) : "-", r.gb_per_s);
      fmt::print("\nlocal pulls: {:.0f}% of memcpy; remote pulls: {:.0f}% of raw loopback TCP; peak RSS {:.2f} GB\n",
                 100 * rows[1].gb_per_s / rows[0].gb_per_s, 100 * rows[3].gb_per_s / rows[2].gb_per_s,
                 tessera::peak_rss_bytes() / 1e9);
      // The host's own speed drifts within a run (raw TCP has read 1.7 and
      // 3.9 GB/s twenty minutes apart), so each repeat's ratio, taken from
      // measurements seconds apart, shows the spread the medians hide.
      fmt::print("per repeat, local/memcpy: {}; remote/raw TCP: {}\n", ratios(runs[1], runs[0]), ratios(runs[3], runs[2]));
    }
    ctx->finalize();
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_pull: error: {}\n", e.what());
    return 1;
  }
}
