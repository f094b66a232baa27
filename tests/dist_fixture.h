// The fixture of the multi-process tests (dist_test.cc, dist_fault_test.cc):
// one small dataset partitioned into 2 parts and into 1, shared by the tests
// of a binary, ip_configs on free loopback ports, and the launch command of
// tests/dist/dist_worker.cc. Not in an anonymous namespace: GoogleTest needs
// one DistTest class across the files that use it.
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace tessera::testing {

// One small dataset, partitioned into 2 parts and into 1, shared by the tests.
class DistTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string d = *dir_ / "data";
    ASSERT_EQ(run_tessera(fmt::format("gen products-like --nodes 4000 --edges 40000 --feat-dim 16 --out {}", d))
                  .exit_code, 0);
    ASSERT_EQ(run_tessera(fmt::format("partition --input {} --num-parts 2 --graph-name g --out {}", d,
                                      *dir_ / "p2")).exit_code, 0);
    ASSERT_EQ(run_tessera(fmt::format("partition --input {} --num-parts 1 --graph-name g --out {}", d,
                                      *dir_ / "p1")).exit_code, 0);
    // Processes started here by hand (as srun / mpirun would) share one job
    // key file; the launcher gives its processes their own.
    const std::string key_file = *dir_ / "job.key";
    ASSERT_EQ(run_tessera("keygen " + key_file).exit_code, 0);
    ::setenv("TESSERA_KEY_FILE", key_file.c_str(), 1);
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string data() { return *dir_ / "data"; }
  static std::string part_config(int parts) { return *dir_ / fmt::format("p{}/g.json", parts); }

  // An ip_config of `machines` lines on 127.0.0.1 with free ports.
  std::string ip_config(int machines, int servers) {
    const int span = servers + 2;
    const int base = free_port_block(machines * span);
    std::string text;
    for (int m = 0; m < machines; ++m) text += fmt::format("127.0.0.1 {}\n", base + m * span);
    const std::string path = scratch_ / "ip_config.txt";
    std::ofstream(path) << text;
    base_port_ = base;
    return path;
  }

  std::string launch_command(const std::string& ip, int parts, int servers, int trainers, const std::string& worker_args) {
    return fmt::format("{} launch --ip-config {} --part-config {} --num-servers {} --num-trainers {} --timeout 30 "
                       "\"{} {}\"",
                       TESSERA_BINARY, ip, part_config(parts), servers, trainers, TESSERA_DIST_WORKER, worker_args);
  }

  static std::string job_id(const std::string& log) {
    std::smatch m;
    return std::regex_search(log, m, std::regex("launch: job ([A-Za-z0-9_-]+)")) ? m[1].str() : "";
  }

  static int count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
    return n;
  }

  TempDir scratch_;
  int base_port_ = 0;
  inline static TempDir* dir_ = nullptr;
};

}  // namespace tessera::testing
