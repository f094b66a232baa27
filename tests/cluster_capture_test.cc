// What an eavesdropper on the job's network sees: a capture (tcpdump on the
// simulated hosts' bridge) of a 2-host GraphSAGE job holds no run of the
// gradient values the trainers all-reduced, and the same search finds them
// in a capture of the same job with --insecure (Gloo's clear TCP), so the
// search itself is shown to work.
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster_fixture.h"

namespace tessera::testing {
namespace {

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// How many runs of 4 consecutive values of `arrays` (as float32 bytes, the
// order they travel in) appear in `capture`. Runs holding a zero or a
// repeated value are skipped: those bytes turn up anywhere.
int64_t runs_found(const std::string& capture, const std::vector<std::vector<float>>& arrays) {
  constexpr size_t kRun = 4;
  // The first 8 bytes of each run index its 16; all runs are then found in
  // one pass over the capture.
  std::unordered_map<uint64_t, std::vector<std::string>> runs;
  for (const std::vector<float>& a : arrays)
    for (size_t i = 0; i + kRun <= a.size(); ++i) {
      bool distinct = true;
      for (size_t k = 0; k < kRun; ++k) distinct = distinct && a[i + k] != 0.0f && (k == 0 || a[i + k] != a[i + k - 1]);
      if (!distinct) continue;
      std::string run(reinterpret_cast<const char*>(&a[i]), kRun * sizeof(float));
      uint64_t key;
      std::memcpy(&key, run.data(), sizeof key);
      runs[key].push_back(std::move(run));
    }
  int64_t found = 0;
  for (size_t at = 0; at + kRun * sizeof(float) <= capture.size(); ++at) {
    uint64_t key;
    std::memcpy(&key, capture.data() + at, sizeof key);
    const auto it = runs.find(key);
    if (it == runs.end()) continue;
    for (const std::string& run : it->second)
      if (capture.compare(at, run.size(), run) == 0) ++found;
  }
  return found;
}

class ClusterCapture : public Cluster {
 protected:
  // Runs a 2-epoch job from host 0 while tcpdump records the bridge; the
  // trainers dump the first all-reduce's values (local and summed). Returns
  // the capture, and the dumps in *dumps.
  std::string capture_job(const std::string& name, const std::string& launch_flags,
                          std::vector<std::vector<float>>* dumps) {
    const std::string dump_dir = workspace() + "/dump-" + name;
    for (int host : {0, 1}) fs::create_directories(host_dir(host) + "/ws/dump-" + name);
    const std::string pcap = dir() + "/" + name + ".pcap", tcpdump_log = dir() + "/" + name + "-tcpdump.log";
    BackgroundCommand tcpdump(
        fmt::format("tcpdump -i {} -U -n -w {} tcp", first_line(dir() + "/bridge"), pcap), tcpdump_log);
    bool listening = false;
    for (int i = 0; i < 100 && !listening; ++i) {
      listening = read_file(tcpdump_log).find("listening on") != std::string::npos;
      if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(listening) << read_file(tcpdump_log);
    const std::string line = fmt::format(
        "cd {} && bin/tessera launch --ip-config ip_config.txt --part-config data/cora.json --num-servers 1 "
        "--num-trainers 1 --num-samplers 1 {} {} --extra-envs TESSERA_TEST_GRADIENT_DUMP={} "
        "\"bin/tessera train sage {} --num-epochs 2 --eval-every 2 --out out-{}\"",
        workspace(), ssh_flags(), launch_flags, dump_dir, kSageFlags, name);
    const CommandResult job = on_host(0, line);
    EXPECT_EQ(job.exit_code, 0) << job.out << job.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the last packets reach the file
    ::kill(tcpdump.pid(), SIGINT);
    tcpdump.wait(10);
    for (int host : {0, 1})
      for (const auto& entry : fs::directory_iterator(host_dir(host) + "/ws/dump-" + name))
        dumps->push_back(read_floats(entry.path()));
    return read_file(pcap);
  }
};

TEST_F(ClusterCapture, NoGradientValueCrossesTheWireInTheClear) {
  const CommandResult copy = on_host(0, prepare({0, 1}));
  ASSERT_EQ(copy.exit_code, 0) << copy.out << copy.err;

  std::vector<std::vector<float>> clear_dumps;
  const std::string clear = capture_job("insecure", "--insecure", &clear_dumps);
  // Each of the 2 trainers wrote what it sent and the sum it got back.
  ASSERT_EQ(clear_dumps.size(), 4u);
  ASSERT_GT(clear_dumps[0].size(), 10000u) << "GraphSAGE on Cora has tens of thousands of gradient values";
  const int64_t seen_in_clear = runs_found(clear, clear_dumps);
  std::printf("--insecure: %zu bytes captured, %lld gradient runs found\n", clear.size(),
              static_cast<long long>(seen_in_clear));
  EXPECT_GT(seen_in_clear, 1000) << "the search finds no gradient values even in Gloo's clear traffic";

  std::vector<std::vector<float>> dumps;
  const std::string encrypted = capture_job("encrypted", "", &dumps);
  ASSERT_EQ(dumps.size(), 4u);
  EXPECT_GT(encrypted.size(), 1u << 20) << "the capture missed the job";
  const int64_t seen = runs_found(encrypted, dumps);
  std::printf("encrypted: %zu bytes captured, %lld gradient runs found\n", encrypted.size(),
              static_cast<long long>(seen));
  EXPECT_EQ(seen, 0) << "gradient values cross the wire in the clear";
  EXPECT_EQ(leftovers_anywhere(), "");
}

}  // namespace
}  // namespace tessera::testing
