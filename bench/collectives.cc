// The trainers' all-reduce on the secured ring against Gloo's, and both
// against the physical bounds measured in the same run (bench/wire_bounds.h):
// loopback TCP's bandwidth between two threads (plain sockets, 1 MB writes),
// the ring's own exchange on plain sockets, and the least time any encrypted
// all-reduce can take here with the fastest AEAD cipher measured. Two
// members, this process and a forked one, over a real rendezvous store on
// 127.0.0.1, sum 1, 16 and 64 MB of float32; each size runs `rounds` times
// per wire, the wires alternating, and the median counts.
//
// Bus bandwidth is NCCL's: bytes x 2(n-1)/n / time, what each member moves
// over its link; with 2 members, the buffer's size over the time.
//
// Usage: bench_collectives [--rounds N] (default 5). Prints a table.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "job/rendezvous.h"
#include "net/security.h"
#include "tessera/distributed/collectives.h"
#include "wire_bounds.h"

namespace {

using Clock = std::chrono::steady_clock;
using tessera::distributed::CollectiveWire;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  const std::vector<int64_t> megabytes{1, 16, 64};
  const double tcp = bench::loopback_tcp_gbps();
  const std::vector<bench::Cipher> ciphers = bench::aead_ciphers();
  std::vector<bench::ClearExchange> clear;
  for (const int64_t mb : megabytes) clear.push_back(bench::clear_exchange(mb << 20, rounds));

  const int port = bench::free_loopback_port();
  const tessera::net::Security security{tessera::net::generate_job_keys(), true};
  // seconds[wire][size] over the rounds, measured by member 0.
  std::vector<std::vector<std::vector<double>>> seconds(2, std::vector<std::vector<double>>(megabytes.size()));
  // The members are two processes, as two trainers are: each has its own
  // ZeroMQ I/O thread to encrypt and decrypt on (threads of one process
  // would share one, and the ring would time a single core's cipher).
  // Forked before either touches ZeroMQ.
  const pid_t peer = ::fork();
  if (peer < 0) {
    std::perror("bench_collectives: fork");
    return 1;
  }
  const int rank = peer == 0 ? 1 : 0;
  auto member = [&] {
    tessera::job::Rendezvous store("127.0.0.1", port, rank == 0, 60, security);
    tessera::distributed::Collectives ring(&store, "ring/", rank, 2, "127.0.0.1", 60, CollectiveWire::kSecuredRing);
    tessera::distributed::Collectives gloo(&store, "gloo/", rank, 2, "127.0.0.1", 60, CollectiveWire::kGloo);
    for (size_t k = 0; k < megabytes.size(); ++k) {
      std::vector<float> data(megabytes[k] * (1 << 20) / sizeof(float), 1.0f);
      for (int round = 0; round < rounds + 1; ++round) {  // round 0 warms up
        for (int wire = 0; wire < 2; ++wire) {
          tessera::distributed::Collectives& c = wire == 0 ? ring : gloo;
          c.barrier();
          const auto start = Clock::now();
          c.all_reduce_sum(data.data(), static_cast<int64_t>(data.size()));
          const double s = seconds_since(start);
          if (rank == 0 && round > 0) seconds[wire][k].push_back(s);
        }
      }
    }
  };
  try {
    member();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_collectives: member %d: %s\n", rank, e.what());
    if (rank == 1) ::_exit(1);
    return 1;
  }
  if (rank == 1) ::_exit(0);
  int status = 0;
  if (::waitpid(peer, &status, 0) != peer || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_collectives: the other member failed\n");
    return 1;
  }

  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  fmt::print("all-reduce of float32, 2 members (processes) on 127.0.0.1, median of {} rounds\n", rounds);
  fmt::print("loopback TCP, one stream, 256 MB: {:.2f} GB/s (the bound)\n", tcp);
  fmt::print("{:>6} {:>14} {:>10} {:>12} {:>10} {:>12} {:>14}\n", "MB", "wire", "time_ms", "busbw_GB/s", "of_TCP",
             "ring/gloo", "of_enc_bound");
  for (size_t k = 0; k < megabytes.size(); ++k) {
    double median[2];
    for (int wire = 0; wire < 2; ++wire) {
      std::vector<double>& v = seconds[wire][k];
      std::sort(v.begin(), v.end());
      median[wire] = v[v.size() / 2];
    }
    // The secured ring against the least time any encrypted all-reduce can take here (the table below).
    const double floor = bench::encrypted_floor_s(megabytes[k] << 20, clear[k], ciphers.front().gbps);
    for (int wire = 0; wire < 2; ++wire) {
      const double busbw = megabytes[k] * (1 << 20) / median[wire] / 1e9;
      fmt::print("{:>6} {:>14} {:>10.2f} {:>12.2f} {:>10.2f} {:>12} {:>14}\n", megabytes[k],
                 wire == 0 ? "secured ring" : "gloo (clear)", median[wire] * 1e3, busbw, busbw / tcp,
                 wire == 0 ? fmt::format("{:.2f}", median[1] / median[0]) : "",
                 wire == 0 ? fmt::format("{:.2f}", floor / median[0]) : "");
    }
  }
  fmt::print("\nwhat any all-reduce can reach here (2 members, {} cores):\n", std::thread::hardware_concurrency());
  for (const bench::Cipher& c : ciphers) fmt::print("  {}: {:.2f} GB/s per core\n", c.name, c.gbps);
  fmt::print("{:>6} {:>14} {:>13} {:>12} {:>16} {:>12}\n", "MB", "plain_ms", "plain_cpu_ms", "plain_of_TCP",
             "encrypted_min_ms", "enc_of_TCP");
  for (size_t k = 0; k < megabytes.size(); ++k) {
    const double bytes = static_cast<double>(megabytes[k] << 20);
    const double floor = bench::encrypted_floor_s(megabytes[k] << 20, clear[k], ciphers.front().gbps);
    fmt::print("{:>6} {:>14.2f} {:>13.2f} {:>12.2f} {:>16.2f} {:>12.2f}\n", megabytes[k], clear[k].wall_s * 1e3,
               clear[k].cpu_s * 1e3, bytes / clear[k].wall_s / 1e9 / tcp, floor * 1e3, bytes / floor / 1e9 / tcp);
  }
  fmt::print("plain: the ring's exchange on plain sockets; encrypted_min: its CPU time plus {} of 4x the buffer\n"
             "(each member encrypts what it sends and decrypts what it receives), shared by the cores at best\n",
             ciphers.front().name);
  fmt::print("peak RSS {:.0f} MB\n", usage.ru_maxrss / 1024.0);
  return 0;
}
