// Progress bars on every long command: drawn on a terminal (a real
// pseudo-terminal from util-linux's `script`), with rate and time left, and
// absent when the output is a pipe or TESSERA_PROGRESS=0.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace tessera::testing {
namespace {

// What `args` prints when its output is a terminal, bar redraws included.
CommandResult on_terminal(const std::string& args, const std::string& env = "") {
  return run_command(fmt::format("{} script -qefc '{} {}' /dev/null", env, TESSERA_BINARY, args));
}

// A bar's text: its label, a bar, the counts, a rate and "ETA m:ss" (or "done").
void expect_bar(const std::string& out, const std::string& label) {
  const size_t at = out.find(label + " [");
  ASSERT_NE(at, std::string::npos) << "no bar '" << label << "' in:\n" << out;
  const std::string bar = out.substr(at, out.find('\r', at) - at);
  EXPECT_NE(bar.find("/s"), std::string::npos) << bar;
  EXPECT_TRUE(bar.find("ETA") != std::string::npos || bar.find("done") != std::string::npos) << bar;
}

class Progress : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ASSERT_EQ(run_tessera(fmt::format("gen products-like --nodes 20000 --edges 400000 --feat-dim 16 --out {}",
                                      *dir_ / "g")).exit_code, 0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static TempDir* dir_;
};
TempDir* Progress::dir_ = nullptr;

TEST_F(Progress, GenAndPartitionDrawBarsOnATerminalOnly) {
  CommandResult r = on_terminal(fmt::format("gen products-like --nodes 20000 --edges 400000 --out {}", *dir_ / "t"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_bar(r.out, "gen: edges");
  expect_bar(r.out, "gen: features");
  EXPECT_NE(r.out.find("generated products-like"), std::string::npos) << "the summary line is still printed";

  r = on_terminal(fmt::format("partition --input {} --num-parts 2 --graph-name g --out {}", *dir_ / "g", *dir_ / "p2"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("partition: metis "), std::string::npos) << r.out;  // a phase without a total: its time
  expect_bar(r.out, "partition: write");

  // Piped, or switched off: the lines they always printed, no redraws.
  r = run_tessera(fmt::format("partition --input {} --num-parts 2 --graph-name g --out {}", *dir_ / "g", *dir_ / "q"));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ((r.out + r.err).find('\r'), std::string::npos);
  EXPECT_EQ((r.out + r.err).find("partition: write"), std::string::npos);
  r = on_terminal(fmt::format("gen products-like --nodes 20000 --edges 400000 --out {}", *dir_ / "u"),
                  "TESSERA_PROGRESS=0");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("gen: edges"), std::string::npos);
}

TEST_F(Progress, TrainingEpochsAndEvaluationDrawBars) {
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --num-parts 1 --graph-name g --out {}", *dir_ / "g",
                                    *dir_ / "p1")).exit_code, 0);
  const CommandResult r = on_terminal(fmt::format(
      "train sage --standalone --part-config {}/g.json --num-epochs 2 --batch-size 100 --fan-out 5,5 --out {}",
      *dir_ / "p1", *dir_ / "run"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_bar(r.out, "epoch 0");
  expect_bar(r.out, "epoch 1");
  expect_bar(r.out, "evaluating");
  // The log lines are whole: a bar is erased before a line is printed.
  const size_t line = r.out.find("Epoch 00001 | Time");
  ASSERT_NE(line, std::string::npos) << r.out;
  EXPECT_TRUE(r.out[line - 1] == '\n' || r.out.compare(line - 4, 4, "\r\033[K") == 0) << r.out.substr(line - 40, 80);
}

TEST_F(Progress, KgeTrainingAndRankingDrawBars) {
  ASSERT_EQ(run_tessera(fmt::format("gen kg --nodes 2000 --edges 20000 --relations 10 --out {}", *dir_ / "kg"))
                .exit_code, 0);
  const CommandResult r = on_terminal(fmt::format(
      "kge train --data_path {} --model_name DistMult --hidden_dim 32 --max_step 400 "
      "--log_interval 100 --batch_size 128 --neg_sample_size 16 --test --save_path {}", *dir_ / "kg", *dir_ / "kge"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_bar(r.out, "training");
  expect_bar(r.out, "ranking");
}

TEST_F(Progress, CopyCountsMachines) {
  const std::string ip = *dir_ / "ip_config.txt";
  std::ofstream(ip) << "127.0.0.1 " << free_port_block(2) << "\n";
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --num-parts 1 --graph-name g --out {}", *dir_ / "g",
                                    *dir_ / "c1")).exit_code, 0);
  const CommandResult r = on_terminal(fmt::format("copy --ip-config {} --workspace {} --part-config {}/g.json", ip,
                                                  *dir_ / "ws", *dir_ / "c1"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_bar(r.out, "copy: machines");
}

}  // namespace
}  // namespace tessera::testing
