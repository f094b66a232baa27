// The fixture of the simulated-cluster tests (cluster_test.cc,
// cluster_fault_test.cc): three hosts, each a network namespace with its own
// address, workspace, /dev/shm and OpenSSH server (tests/cluster/
// netns_hosts.sh), set up once per binary; skips where network namespaces or
// sshd are not available. Not in an anonymous namespace: GoogleTest needs
// one Cluster class across the files that use it.
#pragma once

#include <signal.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "io/chunked_format.h"
#include "job_runs.h"
#include "partition_check.h"
#include "test_util.h"

namespace tessera::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline const std::string kHostsScript = std::string(TESSERA_SOURCE_DIR) + "/tests/cluster/netns_hosts.sh";
inline const char* kSageFlags =
    "--graph-name cora --fan-out 10,25 --batch-size 32 --lr 0.01 --num-hidden 64 --dropout 0.6 "
    "--weight-decay 5e-4 --aggregator gcn --seed 1";
inline const char* kSageEpochs = "--num-epochs 30 --eval-every 30";

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
  return q + "'";
}

inline std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

class Cluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const CommandResult probe = run_command(kHostsScript + " probe");
    if (probe.exit_code != 0) {
      skip_reason_ = "this machine cannot simulate hosts (" + probe.out + probe.err +
                     "); run as root where `ip netns`, veth and sshd are allowed";
      return;
    }
    dir_ = new TempDir();
    // Hosts 0-2 run jobs; host 3 is a foreign host on the same network.
    const CommandResult up = run_command(fmt::format("{} up {} 4", kHostsScript, dir_->path()));
    if (up.exit_code != 0) {
      skip_reason_ = "setting up the hosts failed: " + up.out + up.err;
      return;
    }
    std::ifstream hosts(*dir_ / "hosts");
    for (std::string line; std::getline(hosts, line);) addresses_.push_back(line);
  }

  static void TearDownTestSuite() {
    if (dir_ != nullptr) run_command(fmt::format("{} down {}", kHostsScript, dir_->path()));
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    TESSERA_REQUIRE_SHARED("node/cora", cora);
    cora_ = cora;
  }

  static std::string dir() { return dir_->path(); }
  static std::string workspace() { return *dir_ / "ws"; }
  static std::string host_dir(int host) { return fmt::format("{}/h{}", dir(), host); }

  // Runs a shell command line on a host (in its network and mount namespace).
  static CommandResult on_host(int host, const std::string& command) {
    return run_command(fmt::format("nsenter -t {} -m -n -- /bin/sh -c {}", first_line(host_dir(host) + "/sshd.pid"),
                                   quote(command)));
  }

  static std::string ssh_flags() {
    return fmt::format("--ssh-key {0}/key --ssh-option UserKnownHostsFile={0}/known_hosts", dir());
  }

  // Partitions Cora (or takes `part_config`), writes the ip_config of hosts
  // `machines` (the last `clients` of them client machines) and a script
  // folder holding the binary; returns the copy command (run on host 0).
  std::string prepare(const std::vector<int>& machines, std::string part_config = "", size_t clients = 0) {
    if (part_config.empty()) {
      part_config = dir() + "/p2/cora.json";
      if (!fs::exists(part_config)) {
        EXPECT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 2 --balance-train "
                                          "--balance-edges --out {}/p2", cora_, dir())).exit_code, 0);
      }
    }
    std::ofstream ip(dir() + "/ip_config.txt");
    ip << "# simulated hosts, one base port for all: they are different machines\n";
    for (size_t i = 0; i < machines.size(); ++i)
      ip << addresses_[static_cast<size_t>(machines[i])] << " 30050" << (i + clients >= machines.size() ? " client" : "")
         << "\n";
    ip.close();
    fs::create_directories(dir() + "/scripts/bin");
    fs::copy_file(TESSERA_BINARY, dir() + "/scripts/bin/tessera", fs::copy_options::update_existing);
    return fmt::format("{} copy --ip-config {}/ip_config.txt --workspace {} --rel-data-path data "
                       "--part-config {} --script-folder {}/scripts {}",
                       TESSERA_BINARY, dir(), workspace(), part_config, dir(), ssh_flags());
  }

  static std::string launch_line(const std::string& train_flags) {
    return fmt::format("cd {} && bin/tessera launch --ip-config ip_config.txt --part-config data/cora.json "
                       "--num-servers 1 --num-trainers 1 --num-samplers 1 {} \"bin/tessera train sage {} {}\"",
                       workspace(), ssh_flags(), kSageFlags, train_flags);
  }

  // Trains Cora (kSageFlags, kSageEpochs) as a job launched from host 0 and
  // returns its final record (null if it failed), with 2 trainers expected.
  static nlohmann::json launch_sage(CommandResult* log) {
    *log = on_host(0, launch_line(fmt::format("{} --out out", kSageEpochs)));
    EXPECT_EQ(log->exit_code, 0) << log->out << log->err;
    const nlohmann::json m = final_metrics(log->out);
    EXPECT_TRUE(m.is_object()) << log->out;
    if (m.is_object()) {
      EXPECT_EQ(m["trainers"], 2);
    }
    return m.is_object() ? m : nlohmann::json();
  }

  // A job's Cora test accuracy (kSageFlags, kSageEpochs) against the same
  // training run standalone.
  void expect_standalone_accuracy(const nlohmann::json& metrics, const char* setting,
                                  const std::string& epochs = kSageEpochs) {
    TempDir alone;
    ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 1 --out {}/p1", cora_,
                                      alone.path())).exit_code, 0);
    const CommandResult s = run_tessera(fmt::format("train sage --standalone --part-config {}/p1/cora.json {} {} --out {}/out",
                                                    alone.path(), kSageFlags, epochs, alone.path()));
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    const double distributed = metrics["test_acc"].get<double>();
    const double standalone = final_metrics(s.out)["test_acc"].get<double>();
    std::printf("cora test accuracy, %s %.4f, standalone %.4f\n", setting, distributed, standalone);
    EXPECT_GE(distributed, 0.76);
    EXPECT_NEAR(distributed, standalone, 0.03);
  }

  // Processes left on a host besides its sshd listener (and, unless
  // `with_ssh_sessions`, its ssh sessions: a session whose client was cut
  // off lives until the link returns), and its segments.
  static std::string leftovers(int host, bool with_ssh_sessions = true) {
    const std::string ns = first_line(host_dir(host) + "/netns");
    const std::string sshd = first_line(host_dir(host) + "/sshd.pid");
    // Braces: the caller's redirection of the output must cover the loop.
    const CommandResult pids = run_command(fmt::format(
        "{{ for p in $(ip netns pids {}); do [ $p = {} ] || tr '\\0' ' ' </proc/$p/cmdline; echo; done | grep . "
        "{}; true; }}",
        ns, sshd, with_ssh_sessions ? "" : "| grep -v '^sshd: '"));
    const CommandResult shm = on_host(host, "ls /dev/shm | grep '^tessera' ; true");
    std::string found;
    if (!pids.out.empty()) found += fmt::format("host {} processes: {}", host, pids.out);
    if (!shm.out.empty()) found += fmt::format("host {} segments: {}", host, shm.out);
    return found;
  }

  // Every host clean, allowing a moment for ssh sessions to wind down.
  static std::string leftovers_anywhere() {
    std::string found;
    for (int attempt = 0; attempt < 30; ++attempt) {
      found.clear();
      for (int h = 0; h < static_cast<int>(addresses_.size()); ++h) found += leftovers(h);
      if (found.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return found;
  }

  inline static TempDir* dir_ = nullptr;
  inline static std::vector<std::string> addresses_;
  inline static std::string skip_reason_;
  std::string cora_;
};

}  // namespace tessera::testing
