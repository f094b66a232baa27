// A job survives the loss of any process: `tessera launch --max-restarts 1`
// runs `train sage`, `train rgcn` and `kge train` on 2 machines (loopback), a
// trainer or a server is killed with SIGKILL half-way (or a server while it
// writes a checkpoint), the launcher tears the job down and starts it again,
// and the job resumes from the newest checkpoint every process holds whole.
// The job must exit 0 with the accuracy of an uninterrupted run and lose at
// most one checkpoint interval. tests/cluster_test.cc does the same across
// simulated hosts.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/io/npy.h"
#include "job_runs.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kEpochs = 8;

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

  TempDir scratch_;
  static TempDir* dir_;
};

TempDir* RestartTest::dir_ = nullptr;

TEST_F(RestartTest, SageSurvivesAKilledTrainerAndAKilledServer) {
  const std::string d = scratch_.path();
  const JobRun plain = run_job(command(d + "/plain", 1));
  ASSERT_EQ(plain.code, 0) << plain.log;
  const double plain_acc = final_record(plain.log)["test_acc"].get<double>();
  EXPECT_EQ(plain.log.find("restart"), std::string::npos) << plain.log;
  // Every trainer keeps the newest 2 checkpoints; none after the last epoch.
  for (int rank : {0, 1})
    for (int epochs : {kEpochs - 2, kEpochs - 1})
      EXPECT_TRUE(fs::exists(fmt::format("{}/plain/checkpoints/trainer-{}/epoch-{}/MANIFEST.json", d, rank, epochs)))
          << rank << " " << epochs;
  EXPECT_FALSE(fs::exists(fmt::format("{}/plain/checkpoints/trainer-0/epoch-{}", d, kEpochs - 3)));

  for (const std::string role : {"trainer", "server"}) {
    SCOPED_TRACE(role);
    const std::string out = d + "/killed-" + role;
    const JobRun killed =
        run_job_killing_at(command(out, 1), out + ".log",
                           fmt::format("[m0/trainer/0] Epoch {:05d} | Time", kEpochs / 2 - 1), role, 1);
    const std::string& text = killed.log;
    ASSERT_EQ(killed.code, 0) << text;
    EXPECT_NE(text.find("restart 1 of 1 on the same machines, with TESSERA_RESTART=1"), std::string::npos) << text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\\[m0/trainer/0\\] resuming after epoch (\\d+)"))) << text;
    EXPECT_GE(std::stoi(m[1].str()), kEpochs / 2 - 2) << "lost more than one checkpoint interval:\n" << text;
    const double acc = final_record(text)["test_acc"].get<double>();
    EXPECT_NEAR(acc, plain_acc, 0.03) << text;
    EXPECT_LE(killed.seconds, 1.5 * plain.seconds + 30) << text;
    // The resumed run appended to the first attempt's metrics: every epoch
    // has a record.
    std::set<int> epochs;
    std::istringstream records(read_file(out + "/metrics.jsonl"));
    for (std::string line; std::getline(records, line);) {
      const nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
      if (r.is_object() && r.contains("epoch")) epochs.insert(r["epoch"].get<int>());
    }
    EXPECT_EQ(epochs.size(), static_cast<size_t>(kEpochs)) << read_file(out + "/metrics.jsonl");
    fmt::print("killed {}: exit 0 after a restart, test accuracy {:.4f} (uninterrupted {:.4f}), {:.1f} s "
               "(uninterrupted {:.1f} s)\n",
               role, acc, plain_acc, killed.seconds, plain.seconds);
  }
}

// DGL-KE's asynchronous training: every 1000 steps each server checkpoints
// its machine's entity rows and trainer 0 the relations; after a restart the
// servers start from the partition again and load their checkpoint's rows.
TEST_F(RestartTest, KgeSurvivesAKilledTrainerAndAKilledServer) {
  TESSERA_REQUIRE_SHARED("kg/umls", data);
  const std::string d = scratch_.path();
  ASSERT_EQ(run_tessera(fmt::format("kge partition --data_path {} -k 2 --out {}/p2", data, d)).exit_code, 0);
  const auto command = [&](const std::string& out) {
    return fmt::format(
        "{} launch --ip-config {} --part-config {}/p2/umls.json --num-servers 1 --num-trainers 1 --timeout 20 "
        "--max-restarts 1 \"{} kge train --model_name DistMult --hidden_dim 64 --lr 0.1 --batch_size 256 "
        "--neg_sample_size 64 -adv --max_step 4000 --log_interval 250 --checkpoint_interval 1000 --num_thread 1 "
        "--test --seed 2 --save_path {}\"",
        TESSERA_BINARY, loopback_ip_config(d, 2), d, TESSERA_BINARY, out);
  };
  const JobRun plain = run_job(command(d + "/plain"));
  ASSERT_EQ(plain.code, 0) << plain.log;
  const double plain_mrr = final_record(plain.log)["test_mrr"].get<double>();
  EXPECT_GT(plain_mrr, 0.5);

  for (const std::string role : {"trainer", "server"}) {
    SCOPED_TRACE(role);
    const std::string out = d + "/killed-" + role;
    const JobRun killed =
        run_job_killing_at(command(out), out + ".log", "[m0/trainer/0] [proc 0][Train](2500/4000)", role, 1);
    const std::string& text = killed.log;
    ASSERT_EQ(killed.code, 0) << text;
    EXPECT_NE(text.find("restart 1 of 1 on the same machines"), std::string::npos) << text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\\[m0/trainer/0\\] resuming after step (\\d+) from .*/checkpoint/")))
        << text;
    EXPECT_GE(std::stoi(m[1].str()), 2000) << "lost more than one checkpoint interval:\n" << text;
    const double mrr = final_record(text)["test_mrr"].get<double>();
    // Asynchronous pushes make runs of one seed differ: at 4000 steps 4
    // uninterrupted runs spanned 0.632-0.653 (at 2000 steps, 0.607-0.652).
    EXPECT_NEAR(mrr, plain_mrr, 0.04) << text;
    EXPECT_LE(killed.seconds, 1.5 * plain.seconds + 30) << text;
    fmt::print("kge, killed {}: exit 0 after a restart, test MRR {:.4f} (uninterrupted {:.4f}), {:.1f} s "
               "(uninterrupted {:.1f} s)\n",
               role, mrr, plain_mrr, killed.seconds, plain.seconds);
  }
}

// R-GCN on AIFB: the featureless types learn DistEmbedding rows, which the
// servers checkpoint (rows and Adam state, each machine its own) beside the
// trainers' dense checkpoints; a resumed job reloads both.
TEST_F(RestartTest, RgcnSurvivesAServerKilledMidCheckpoint) {
  TESSERA_REQUIRE_SHARED("hetero/AIFB", aifb);
  const std::string d = scratch_.path();
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --format rdf --graph-name aifb --num-parts 2 "
                                    "--balance-train --out {}/p2", aifb, d)).exit_code, 0);
  constexpr int kRgcnEpochs = 30;
  const std::string ip_config = loopback_ip_config(d, 2);
  const auto command = [&](const std::string& out, const std::string& extra) {
    return fmt::format(
        "{} launch --ip-config {} --part-config {}/p2/aifb.json --num-servers 1 --num-trainers 1 --num-samplers 1 "
        "--timeout 20 --max-restarts 1 \"{} train rgcn --graph-name aifb --n-epochs {} --n-hidden 16 --fanout 20,20 "
        "--batch-size 16 --lr 0.01 --sparse-lr 0.05 --use-self-loop --dropout 0.2 --seed 4 --out {} {}\"",
        TESSERA_BINARY, ip_config, d, TESSERA_BINARY, kRgcnEpochs, out, extra);
  };
  const JobRun plain = run_job(command(d + "/plain", ""));
  ASSERT_EQ(plain.code, 0) << plain.log;
  const double plain_acc = final_record(plain.log)["test_acc"].get<double>();
  for (const std::string owner : {"trainer-0", "trainer-1", "server-0", "server-1"})
    for (int epochs : {kRgcnEpochs - 2, kRgcnEpochs - 1})
      EXPECT_TRUE(fs::exists(fmt::format("{}/plain/checkpoints/{}/epoch-{}/MANIFEST.json", d, owner, epochs)))
          << owner << " " << epochs;
  // Each server wrote its own machine's rows of every embedding table.
  const auto rows = [&](int machine) {
    int64_t n = 0;
    for (const auto& f : fs::directory_iterator(fmt::format("{}/plain/checkpoints/server-{}/epoch-{}", d, machine,
                                                            kRgcnEpochs - 1)))
      if (f.path().extension() == ".npy" && f.path().stem().extension().empty()) n += read_npy(f.path()).shape()[0];
    return n;
  };
  EXPECT_GT(rows(0), 1000);
  EXPECT_GT(rows(1), 1000);

  const auto check_resumed = [&](const JobRun& killed, int min_epochs_kept) {
    const std::string& text = killed.log;
    ASSERT_EQ(killed.code, 0) << text;
    EXPECT_NE(text.find("restart 1 of 1 on the same machines"), std::string::npos) << text;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\\[m0/trainer/0\\] resuming after epoch (\\d+) from \\S+/"
                                                      "trainer-0/epoch-(\\d+)")))
        << text;
    EXPECT_GE(std::stoi(m[2].str()), min_epochs_kept) << "lost more than one checkpoint interval:\n" << text;
    const double acc = final_record(text)["test_acc"].get<double>();
    // 36 test entities: one is 0.028; a seed's runs land within two.
    EXPECT_NEAR(acc, plain_acc, 0.06) << text;
    EXPECT_LE(killed.seconds, 1.5 * plain.seconds + 30) << text;
    fmt::print("rgcn: exit 0 after a restart from epoch {}, test accuracy {:.4f} (uninterrupted {:.4f}), {:.1f} s "
               "(uninterrupted {:.1f} s)\n",
               m[2].str(), acc, plain_acc, killed.seconds, plain.seconds);
  };
  // A trainer or a server killed half-way: Cluster.JobsSurviveAKilledTrainerAndServer... (the same kills
  // across simulated hosts) covers R-GCN; here a server dies in the middle of a checkpoint.
  // Server 1 is killed while it writes checkpoint 20 (its files written, its
  // manifest not yet published): the job resumes from checkpoint 10.
  SCOPED_TRACE("server killed mid-checkpoint");
  const std::string out = d + "/killed-mid-checkpoint";
  const std::string staging = out + "/checkpoints/server-1";
  const auto writing_checkpoint_20 = [&](const std::string&) {
    std::error_code ec;
    for (fs::directory_iterator it(staging, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind("epoch-20.tessera-tmp-", 0) == 0) return true;
    return false;
  };
  const JobRun killed =
      run_job_killing("env TESSERA_FAULT_CHECKPOINT_PAUSE_MS=2000 " + command(out, "--checkpoint-every 10"),
                      out + ".log", "server 1 writing checkpoint 20", writing_checkpoint_20, "server", 1);
  check_resumed(killed, 10);
  EXPECT_NE(killed.log.find("resuming after epoch 9 from"), std::string::npos) << killed.log;
}

}  // namespace
}  // namespace tessera::testing
