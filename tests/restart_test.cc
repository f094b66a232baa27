// A job survives the loss of any process: `tessera launch --max-restarts 1`
// runs `train sage` on 2 machines (loopback), a trainer or a server is
// killed with SIGKILL half-way, the launcher tears the job down and starts
// it again, and the trainers resume from their newest common checkpoint.
// The job must exit 0 with the accuracy of an uninterrupted run and lose at
// most the interrupted epoch.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kEpochs = 8;

// Processes of job `id` in `role` on `machine`: the tessera binaries, not
// the shells that started them.
std::vector<int> job_processes(const std::string& id, const std::string& role, int machine) {
  std::vector<int> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm(entry.path() / "comm");
    std::string command;
    std::getline(comm, command);
    if (command != "tessera") continue;
    std::ifstream env_file(entry.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(env_file)), std::istreambuf_iterator<char>());
    // environ is NUL-separated: "A=1\0B=2\0".
    const std::string padded = std::string(1, '\0') + env;
    const auto has = [&](const std::string& var) { return padded.find('\0' + var + '\0') != std::string::npos; };
    if (has("TESSERA_JOB_ID=" + id) && has("TESSERA_ROLE=" + role) &&
        has("TESSERA_MACHINE_ID=" + std::to_string(machine)))
      pids.push_back(std::stoi(name));
  }
  return pids;
}

class RestartTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const std::string d = dir_->path();
    ASSERT_EQ(run_tessera(fmt::format("gen products-like --nodes 20000 --edges 200000 --feat-dim 32 --classes 8 --out "
                                      "{}/data",
                                      d))
                  .exit_code,
              0);
    ASSERT_EQ(
        run_tessera(fmt::format("partition --input {}/data --graph-name g --num-parts 2 --out {}/p2", d, d)).exit_code,
        0);
  }
  static void TearDownTestSuite() { delete dir_; }

  std::string command(const std::string& out, int restarts) const {
    return fmt::format(
        "{} launch --ip-config {} --part-config {}/p2/g.json --num-servers 1 --num-trainers 1 --num-samplers 1 "
        "--timeout 20 --max-restarts {} \"{} train sage --num-epochs {} --batch-size 100 --fan-out 5,10 "
        "--num-hidden 32 --lr 0.01 --dropout 0.2 --eval-every 1000 --log-every 100000 --seed 4 --out {}\"",
        TESSERA_BINARY, loopback_ip_config(scratch_.path(), 2), dir_->path(), restarts, TESSERA_BINARY, kEpochs, out);
  }

  // Runs the job, kills `role` of machine 1 once trainer 0 has finished
  // half the epochs, and returns the launcher's log (exit code in *code).
  std::string run_with_kill(const std::string& role, const std::string& out, int* code, double* seconds) {
    const std::string log = out + ".log";
    const auto start = std::chrono::steady_clock::now();
    BackgroundCommand job(command(out, 1), log);
    const std::string half = fmt::format("[m0/trainer/0] Epoch {:05d} | Time", kEpochs / 2 - 1);
    std::string text;
    while ((text = read_file(log)).find(half) == std::string::npos) {
      EXPECT_EQ(job.wait(0), -1) << text;
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
        ADD_FAILURE() << "no epoch " << kEpochs / 2 - 1 << " within 120 s:\n" << text;
        return text;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::smatch m;
    EXPECT_TRUE(std::regex_search(text, m, std::regex("launch: job ([A-Za-z0-9_-]+)"))) << text;
    const std::vector<int> victims = job_processes(m[1].str(), role, 1);
    EXPECT_EQ(victims.size(), 1u) << role << "\n" << text;
    for (int pid : victims) EXPECT_EQ(::kill(pid, SIGKILL), 0);
    *code = job.wait(300);
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return read_file(log);
  }

  TempDir scratch_;
  static TempDir* dir_;
};

TempDir* RestartTest::dir_ = nullptr;

TEST_F(RestartTest, SageSurvivesAKilledTrainerAndAKilledServer) {
  const std::string d = scratch_.path();
  const auto start = std::chrono::steady_clock::now();
  const CommandResult plain = run_command(command(d + "/plain", 1));
  const double plain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  const double plain_acc = final_metrics(plain.out)["test_acc"].get<double>();
  EXPECT_EQ(plain.err.find("restart"), std::string::npos) << plain.err;
  // Every trainer keeps the newest 2 checkpoints; none after the last epoch.
  for (int rank : {0, 1})
    for (int epochs : {kEpochs - 2, kEpochs - 1})
      EXPECT_TRUE(fs::exists(fmt::format("{}/plain/checkpoints/trainer-{}/epoch-{}/MANIFEST.json", d, rank, epochs)))
          << rank << " " << epochs;
  EXPECT_FALSE(fs::exists(fmt::format("{}/plain/checkpoints/trainer-0/epoch-{}", d, kEpochs - 3)));

  for (const std::string role : {"trainer", "server"}) {
    SCOPED_TRACE(role);
    int code = -1;
    double seconds = 0;
    const std::string out = d + "/killed-" + role;
    const std::string text = run_with_kill(role, out, &code, &seconds);
    ASSERT_EQ(code, 0) << text;
    EXPECT_NE(text.find("restart 1 of 1 on the same machines, with TESSERA_RESTART=1"), std::string::npos) << text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\\[m0/trainer/0\\] resuming after epoch (\\d+)"))) << text;
    EXPECT_GE(std::stoi(m[1].str()), kEpochs / 2 - 2) << "lost more than one checkpoint interval:\n" << text;
    const double acc = final_metrics(read_file(out + ".log"))["test_acc"].get<double>();
    EXPECT_NEAR(acc, plain_acc, 0.03) << text;
    EXPECT_LE(seconds, 1.5 * plain_s + 30) << text;
    fmt::print("killed {}: exit 0 after a restart, test accuracy {:.4f} (uninterrupted {:.4f}), {:.1f} s "
               "(uninterrupted {:.1f} s)\n",
               role, acc, plain_acc, seconds, plain_s);
  }
}

}  // namespace
}  // namespace tessera::testing
