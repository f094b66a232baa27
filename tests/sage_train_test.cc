// `tessera train sage` end to end: real partitions of Cora, real servers and
// trainers on loopback through `tessera launch`, and the accuracy the
// published GraphSAGE reaches; standalone runs of the same seeds agree.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/version.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// Cora's recipe (GraphSAGE-gcn as in DGL's examples, Planetoid split).
const char* kCoraFlags =
    "--graph-name cora --num-epochs 60 --fan-out 10,25 --batch-size 32 --lr 0.01 --num-hidden 64 --dropout 0.6 "
    "--weight-decay 5e-4 --eval-every 60 --aggregator gcn";

TEST(SageTrain, CoraDistributedReachesPublishedAccuracyAndStandaloneAgrees) {
  TESSERA_REQUIRE_SHARED("node/cora", cora);
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 2 --balance-train "
                                    "--balance-edges --out {}/p2", cora, d)).exit_code, 0);
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 1 --out {}/p1", cora, d))
                .exit_code, 0);
  double distributed = 0, standalone = 0;
  for (int seed = 0; seed < 3; ++seed) {
    const std::string out = fmt::format("{}/dist{}", d, seed);
    const CommandResult r = run_command(fmt::format(
        "{} launch --ip-config {} --part-config {}/p2/cora.json --num-servers 1 --num-trainers 1 --num-samplers 1 "
        "\"{} train sage {} --seed {} --out {}\"",
        TESSERA_BINARY, loopback_ip_config(d, 2), d, TESSERA_BINARY, kCoraFlags, seed, out));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json m = final_metrics(r.out);
    ASSERT_TRUE(m.is_object()) << r.out;
    EXPECT_EQ(m["trainers"], 2);
    for (const char* key : {"val_acc", "epoch_time_s", "seeds_per_s", "sample_s", "fetch_s", "compute_s",
                            "allreduce_s"})
      EXPECT_TRUE(m.contains(key)) << key;
    distributed += m["test_acc"].get<double>() / 3;
    // Hidden 64 is wider than the narrow kernels take: layer 0 runs the
    // BLAS, and the log says so; the 7-class output layer is narrow.
    const bool narrow = std::string(tessera::kernel_level()) == "x86-64-v4";
    EXPECT_EQ(m["layer_kernels"], nlohmann::json({"BLAS", narrow ? "narrow GEMM" : "BLAS"})) << m.dump();
    EXPECT_NE(r.out.find("layer kernels BLAS, "), std::string::npos) << r.out;
    // Both trainers logged through the launcher; only trainer 0 reports.
    EXPECT_NE(r.out.find("[m0/trainer/0] Epoch 00059"), std::string::npos);
    EXPECT_EQ(r.out.find("[m1/trainer/0] Epoch"), std::string::npos);
    EXPECT_TRUE(fs::exists(out + "/model/model.pt"));
    EXPECT_TRUE(fs::exists(out + "/model/config.json"));
    std::ifstream metrics(out + "/metrics.jsonl");
    int lines = 0;
    for (std::string line; std::getline(metrics, line);) ++lines;
    EXPECT_EQ(lines, 61);  // one per epoch and the final record

    const CommandResult s = run_tessera(fmt::format("train sage --standalone --part-config {}/p1/cora.json {} "
                                                    "--seed {} --out {}/alone{}", d, kCoraFlags, seed, d, seed));
    ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
    const nlohmann::json a = final_metrics(s.out);
    ASSERT_TRUE(a.is_object()) << s.out;
    standalone += a["test_acc"].get<double>() / 3;
  }
  RecordProperty("cora_distributed_test_acc", std::to_string(distributed));
  RecordProperty("cora_standalone_test_acc", std::to_string(standalone));
  std::printf("cora test accuracy, mean of 3 seeds: distributed %.4f, standalone %.4f\n", distributed, standalone);
  EXPECT_GE(distributed, 0.79);
  EXPECT_NEAR(distributed, standalone, 0.025);
}

TEST(SageTrain, BadFlagsAreClearErrors) {
  TESSERA_REQUIRE_SHARED("node/cora", cora);
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 1 --out {}/p1", cora, d))
                .exit_code, 0);
  const std::string base = fmt::format("train sage --standalone --part-config {}/p1/cora.json --out {}/o ", d, d);
  struct Case {
    std::string flags, message;
  };
  for (const Case& c : std::vector<Case>{
           // DGL's spelling is an alias; errors name the canonical flag.
           {"--fan-out 10,x", "--fanout '10,x': entry 'x' is not a fanout"},
           {"--fan-out 10,10,10", "gives 3 fanouts for 2 layers"},
           {"--graph-name products", "--graph-name products does not match the partitioned graph 'cora'"},
           {"--num-epochs 0", "--num-epochs must be at least 1"},
           {"--aggregator lstm", "aggregator"},
           {"--cache-remote-features 1.5", "--cache-remote-features must be a fraction in [0, 1] (got 1.5)"},
           {"--n-epochs 0", "--num-epochs must be at least 1"},
           {"--batch-size-eval 0", "--eval-batch-size must be at least 1"},
           {"--ip-config ip.txt", "--ip-config ip.txt: a standalone process has no servers to reach"},
       }) {
    const CommandResult r = run_tessera(base + c.flags);
    EXPECT_EQ(r.exit_code, 1) << c.flags << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << "\n" << r.err;
  }
  // A multi-partition config cannot run standalone.
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --graph-name cora --num-parts 2 --out {}/p2", cora, d))
                .exit_code, 0);
  const CommandResult r = run_tessera(fmt::format("train sage --standalone --part-config {}/p2/cora.json", d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("2 partitions"), std::string::npos) << r.err;

  // Under the launcher, --part-config must name the launcher's file: the
  // same file by another path runs, another file is refused up front.
  const std::string ip_config = loopback_ip_config(d, 2);
  auto launch = [&](const std::string& trainer_flags) {
    return run_command(fmt::format("{} launch --workspace {} --ip-config {} --part-config p2/cora.json "
                                   "--num-servers 1 --num-trainers 1 \"{} train sage {}\"",
                                   TESSERA_BINARY, d, ip_config, TESSERA_BINARY, trainer_flags));
  };
  const CommandResult same = launch(fmt::format("--part-config {}/p2/../p2/cora.json --ip-config {} --num-epochs 1 "
                                                "--max-batches 1 --out {}/same", d, ip_config, d));
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  const CommandResult other = launch(fmt::format("--part-config {}/p1/cora.json --num-epochs 1 --out {}/other", d, d));
  EXPECT_NE(other.exit_code, 0);
  EXPECT_NE((other.out + other.err)
                .find(fmt::format("--part-config {}/p1/cora.json is not the file the launcher gave this job", d)),
            std::string::npos)
      << other.out << other.err;
}

}  // namespace
}  // namespace tessera::testing
