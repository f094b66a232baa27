// `tessera train rgcn` end to end: a generated mag-like graph and AIFB,
// partitioned with reverse edges, real servers and trainers on loopback
// through `tessera launch`; standalone runs of the same seed agree.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/io/npy.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

// DistDGL's ogbn-mag command line, scaled to a 20,000-node graph.
const char* kMagFlags =
    "--graph-name mag --dataset ogbn-mag --fanout=10,10 --batch-size 256 --n-hidden 64 --lr 0.01 "
    "--eval-batch-size 512 --low-mem --dropout 0.5 --use-self-loop --n-bases 2 --n-epochs 8 --layer-norm "
    "--sparse-embedding --sparse-lr 0.06 --num-servers 1 --predict-category paper --eval-every 4";

// AIFB as in bench/rgcn_accuracy.sh.
const char* kAifbFlags =
    "--graph-name aifb --n-epochs 30 --n-hidden 16 --fanout 20,20 --batch-size 16 --lr 0.01 --sparse-lr 0.05 "
    "--use-self-loop --dropout 0.2";

// A 2000-node mag-like graph in one partition: <dir>/p1/mag.json.
void small_mag_graph(const std::string& d) {
  ASSERT_EQ(run_tessera(fmt::format("gen mag-like --nodes 2000 --edges 10000 --out {}/data", d)).exit_code, 0);
  ASSERT_EQ(run_tessera(fmt::format("partition --input {}/data --add-reverse --graph-name mag --num-parts 1 --out {}/p1",
                                    d, d)).exit_code, 0);
}

nlohmann::json launch_rgcn(const std::string& dir, const std::string& part_config, const std::string& flags,
                           const std::string& out) {
  const CommandResult r = run_command(fmt::format(
      "{} launch --ip-config {} --part-config {} --num-servers 1 --num-trainers 1 --num-samplers 1 "
      "\"{} train rgcn {} --out {}\"",
      TESSERA_BINARY, loopback_ip_config(dir, 2), part_config, TESSERA_BINARY, flags, out));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json m = final_metrics(r.out);
  EXPECT_TRUE(m.is_object()) << r.out << r.err;
  return m;
}

TEST(RgcnTrain, MagLikeLearnsDistributedAndStandaloneAgree) {
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("gen mag-like --nodes 20000 --edges 200000 --seed 1 --out {}/data", d)).exit_code, 0);
  for (int parts : {1, 2})
    ASSERT_EQ(run_tessera(fmt::format("partition --input {}/data --add-reverse --graph-name mag --num-parts {} "
                                      "--balance-train --balance-edges --out {}/p{}", d, parts, d, parts)).exit_code, 0);
  const nlohmann::json m = launch_rgcn(d, d + "/p2/mag.json", kMagFlags, d + "/dist");
  ASSERT_TRUE(m.is_object());
  EXPECT_EQ(m["trainers"], 2);
  for (const char* key : {"val_acc", "epoch_time_s", "sample_s", "fetch_s", "compute_s", "allreduce_s",
                          "sparse_update_s"})
    EXPECT_TRUE(m.contains(key)) << key;
  const CommandResult s = run_tessera(fmt::format("train rgcn --standalone --conf-path {}/p1/mag.json {} --out {}/alone",
                                                  d, kMagFlags, d));
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  const nlohmann::json a = final_metrics(s.out);
  ASSERT_TRUE(a.is_object()) << s.out;
  const double dist_acc = m["test_acc"].get<double>(), alone_acc = a["test_acc"].get<double>();
  std::printf("mag-like 20k test accuracy: distributed %.4f, standalone %.4f\n", dist_acc, alone_acc);
  // 349 planted classes: a majority guess scores about 0.01.
  EXPECT_GE(dist_acc, 0.85);
  // Each of the 2 trainers steps through half the seeds with gradients
  // averaged, so the distributed run takes half the optimizer steps per
  // epoch (as in DistDGL); one seed of either lands within about 0.02.
  EXPECT_NEAR(dist_acc, alone_acc, 0.04);

  // Outputs: the model, one embedding table per featureless type (rows in
  // original IDs, n-hidden wide), metrics per epoch plus the final record.
  EXPECT_TRUE(fs::exists(d + "/dist/model/model.pt"));
  EXPECT_TRUE(fs::exists(d + "/dist/model/config.json"));
  EXPECT_FALSE(fs::exists(d + "/dist/embeddings/paper.npy")) << "papers have features, not embeddings";
  for (const char* ntype : {"author", "field_of_study", "institution"}) {
    const Array e = read_npy(fmt::format("{}/dist/embeddings/{}.npy", d, ntype));
    ASSERT_EQ(e.shape().size(), 2u) << ntype;
    EXPECT_EQ(e.shape()[1], 64) << ntype;
    EXPECT_GT(e.shape()[0], 0) << ntype;
  }
  std::ifstream metrics(d + "/dist/metrics.jsonl");
  int lines = 0;
  for (std::string line; std::getline(metrics, line);) ++lines;
  EXPECT_EQ(lines, 9);
}

TEST(RgcnTrain, AifbDistributedReachesTheRgcnPapersRange) {
  TESSERA_REQUIRE_SHARED("hetero/AIFB", aifb);
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_EQ(run_tessera(fmt::format("partition --input {} --format rdf --graph-name aifb --num-parts 2 "
                                    "--balance-train --out {}/p2", aifb, d)).exit_code, 0);
  double mean = 0;
  for (int seed = 0; seed < 2; ++seed) {
    const nlohmann::json m =
        launch_rgcn(d, d + "/p2/aifb.json", fmt::format("{} --seed {}", kAifbFlags, seed), fmt::format("{}/s{}", d, seed));
    ASSERT_TRUE(m.is_object());
    mean += m["test_acc"].get<double>() / 2;
  }
  std::printf("AIFB test accuracy, distributed, mean of 2 seeds: %.4f\n", mean);
  EXPECT_GE(mean, 0.86);  // R-GCN paper 0.958; 36 test entities, one is 0.028
}

// One process holds every row in standalone mode and checkpoints them as
// server-0. Resuming from checkpoint 3 reruns epoch 4 exactly: the same
// weights, Adam moments, embedding rows, their Adam state and random state.
TEST(RgcnTrain, AResumedRunRepeatsTheUninterruptedEpochExactly) {
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_NO_FATAL_FAILURE(small_mag_graph(d));
  const std::string base = fmt::format("train rgcn --standalone --conf-path {}/p1/mag.json --n-epochs 4 --dropout 0.5 ", d);
  ASSERT_EQ(run_tessera(base + "--out " + d + "/a").exit_code, 0);
  EXPECT_TRUE(fs::exists(d + "/a/checkpoints/server-0/epoch-3/rgcn-emb-author.adam_m.npy"));
  // Run b starts from a copy of run a's checkpoints.
  const auto copy_checkpoints = [&] {
    fs::remove_all(d + "/b");
    fs::create_directories(d + "/b");
    fs::copy(d + "/a/checkpoints", d + "/b/checkpoints", fs::copy_options::recursive);
  };
  copy_checkpoints();
  const CommandResult r = run_tessera(base + "--resume --out " + d + "/b");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resuming after epoch 2 from"), std::string::npos) << r.out;
  const auto last_epoch = [](const std::string& metrics) {
    nlohmann::json last;
    std::ifstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json record = nlohmann::json::parse(line);
      if (record.contains("epoch")) last = record;
    }
    return last;
  };
  const nlohmann::json a = last_epoch(d + "/a/metrics.jsonl"), b = last_epoch(d + "/b/metrics.jsonl");
  EXPECT_EQ(b["epoch"], 3);
  EXPECT_EQ(a["epoch"], 3);
  EXPECT_DOUBLE_EQ(b["loss"].get<double>(), a["loss"].get<double>());
  EXPECT_DOUBLE_EQ(b["test_acc"].get<double>(), a["test_acc"].get<double>());

  // Without the servers' share the checkpoint is incomplete: nothing to resume.
  copy_checkpoints();
  fs::remove(d + "/b/checkpoints/server-0/epoch-3/rgcn-emb-author.npy");
  fs::remove_all(d + "/b/checkpoints/server-0/epoch-2");
  const CommandResult damaged = run_tessera(base + "--resume --out " + d + "/b");
  ASSERT_EQ(damaged.exit_code, 0) << damaged.err;
  EXPECT_NE(damaged.err.find("rgcn-emb-author.npy is missing"), std::string::npos) << damaged.err;
  EXPECT_NE(damaged.out.find("starting from the first epoch"), std::string::npos) << damaged.out;
}

TEST(RgcnTrain, BadFlagsAreClearErrors) {
  TempDir dir;
  const std::string d = dir.path();
  ASSERT_NO_FATAL_FAILURE(small_mag_graph(d));
  const std::string base = fmt::format("train rgcn --standalone --conf-path {}/p1/mag.json --out {}/o ", d, d);
  struct Case {
    std::string flags, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--fanout-mode sometimes", "--fanout-mode 'sometimes': expected total or per-etype"},
           {"--predict-category venue", "--predict-category venue: that node type has no labels"},
           {"--sparse-optimizer sgd", "--sparse-optimizer 'sgd': expected adam or adagrad"},
           {"--fanout 10,x", "--fanout '10,x': entry 'x' is not a fanout"},
           {"--fanout 10,10,10", "gives 3 fanouts for 2 layers"},
           {"--n-hidden 0", "--num-hidden must be at least 1"},
           {"--num-epochs 0", "--num-epochs must be at least 1"},
           {"--validation-fanout 5,5,5", "--eval-fanout '5,5,5' gives 3 fanouts for 2 layers"},
       }) {
    const CommandResult r = run_tessera(base + c.flags);
    EXPECT_EQ(r.exit_code, 1) << c.flags << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << "\n" << r.err;
  }
}

}  // namespace
}  // namespace tessera::testing
