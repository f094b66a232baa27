// The built-in trainers over awkward graphs (awkward_graphs.h) and a
// pairwise design of their flags (pairwise.h): every value of every flag
// meets every value of every other flag, the graph and the deployment
// (standalone, launched on 1 or 2 loopback machines) included, in some run.
// Each run must exit 0 with a finite loss, its final metrics and its
// metrics.jsonl, and without a C++ backtrace.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "awkward_graphs.h"
#include "pairwise.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

const std::string kWarning = "has no incoming edge of any type";

// Datasets and their partitions, made once per test on first use.
class Workspace {
 public:
  // The partition config of `graph` in `parts` parts, partitioned with
  // `flags` (`kge` partitions with `tessera kge partition`).
  std::string partitioned(const AwkwardGraph& graph, int parts, const std::string& flags, bool kge = false) {
    const std::string key = fmt::format("{}-{}{}", graph.name, parts, flags);
    auto it = configs_.find(key);
    if (it != configs_.end()) return it->second;
    if (!fs::exists(dir_ / graph.name)) write_awkward_graph(graph, dir_.path());
    std::string out = dir_ / ("p" + std::to_string(configs_.size()));
    const CommandResult r =
        kge ? run_tessera(fmt::format("kge partition --data_path {} -k {} --out {}", dir_ / graph.name, parts, out))
            : run_tessera(fmt::format("partition --input {} --num-parts {} {} --out {}", dir_ / graph.name, parts,
                                      flags, out));
    EXPECT_EQ(r.exit_code, 0) << key << "\n" << r.out << r.err;
    last_partition_err_ = r.err;
    return configs_[key] = fmt::format("{}/{}.json", out, graph.name);
  }
  std::string dataset(const AwkwardGraph& graph) {
    if (!fs::exists(dir_ / graph.name)) write_awkward_graph(graph, dir_.path());
    return dir_ / graph.name;
  }
  std::string out_dir(int run) const { return dir_ / ("run" + std::to_string(run)); }
  const std::string& path() const { return dir_.path(); }
  const std::string& last_partition_err() const { return last_partition_err_; }

 private:
  TempDir dir_;
  std::map<std::string, std::string> configs_;
  std::string last_partition_err_;
};

// How a run is started: standalone, or under tessera launch with one
// server per machine.
enum class Deploy { kStandalone, kLaunch1, kLaunch2 };
const std::vector<std::string> kDeployNames{"standalone", "launch-1-machine", "launch-2-machines"};
int machines(Deploy d) { return d == Deploy::kLaunch2 ? 2 : 1; }

// `trainer_command`: "train rgcn ... --out DIR" / "kge train ... --save_path DIR".
CommandResult start(Workspace& ws, Deploy deploy, const std::string& part_config, const std::string& trainer_command,
                    int samplers, int trainers) {
  if (deploy == Deploy::kStandalone) return run_tessera(trainer_command);
  return run_command(fmt::format(
      "{} launch --ip-config {} --part-config {} --num-servers 1 --num-trainers {} --num-samplers {} \"{} {}\"",
      TESSERA_BINARY, loopback_ip_config(ws.path(), machines(deploy)), part_config, trainers, samplers, TESSERA_BINARY,
      trainer_command));
}

// What every run must leave: exit 0, a final record with a finite loss,
// metrics.jsonl, no backtrace.
void expect_clean_run(const CommandResult& r, const std::string& out, const std::string& what) {
  EXPECT_EQ(r.exit_code, 0) << what << "\n" << r.out << r.err;
  const nlohmann::json m = final_metrics(r.out);
  ASSERT_TRUE(m.is_object()) << what << "\n" << r.out << r.err;
  ASSERT_TRUE(m.contains("loss")) << what << "\n" << m.dump();
  EXPECT_TRUE(m["loss"].is_number() && std::isfinite(m["loss"].get<double>())) << what << "\n" << m.dump();
  EXPECT_TRUE(fs::exists(out + "/metrics.jsonl")) << what;
  EXPECT_EQ(read_file(out + "/metrics.jsonl").find("NaN"), std::string::npos) << what;
  for (const char* trace : {"frame #", "Exception raised from", "terminate called"})
    EXPECT_EQ((r.out + r.err).find(trace), std::string::npos) << what << "\n" << r.err;
}

std::string describe(const std::vector<Factor>& factors, const PairwiseRow& row) {
  std::string s;
  for (size_t i = 0; i < factors.size(); ++i)
    s += fmt::format("{}{}={}", i ? " " : "", factors[i].name, factors[i].values[row[i]]);
  return s;
}

std::vector<PairwiseRow> design(const std::vector<Factor>& factors, const char* trainer) {
  const std::vector<PairwiseRow> rows = all_pairs(factors);
  EXPECT_EQ(uncovered_pairs(factors, rows), 0);
  int64_t product = 1;
  for (const Factor& f : factors) product *= static_cast<int64_t>(f.values.size());
  std::printf("%s: %zu factors, %zu runs cover every pair (full product: %lld)\n", trainer, factors.size(),
              rows.size(), static_cast<long long>(product));
  return rows;
}

TEST(ConfigSweep, PairwiseDesignCoversEveryPairInFewRows) {
  const std::vector<Factor> f{{"a", {"0", "1", "2", "3"}}, {"b", {"0", "1", "2"}}, {"c", {"0", "1"}},
                              {"d", {"0", "1"}},           {"e", {"0", "1", "2"}}, {"f", {"0", "1"}}};
  const std::vector<PairwiseRow> rows = all_pairs(f);
  EXPECT_EQ(uncovered_pairs(f, rows), 0);
  EXPECT_GE(rows.size(), 12u);  // 4 x 3 pairs need 12 rows at least
  EXPECT_LE(rows.size(), 18u);  // against 288 for the full product
  EXPECT_GT(uncovered_pairs(f, {rows.begin(), rows.end() - 1}), 0) << "every row should add a pair";
  EXPECT_EQ(rows, all_pairs(f)) << "deterministic";
}

// The R-GCN paper's MUTAG-like case: the labelled type is only a subject.
// Bases 30 without a self-loop used to die in libtorch; it trains on 1 and 2
// partitions, and without the inverse relations both commands warn.
TEST(ConfigSweep, SubjectOnlyLabelledTypeTrainsAndWarnsWithoutInverse) {
  Workspace ws;
  const AwkwardGraph molecules = hetero_graphs()[0];
  ASSERT_EQ(molecules.name, "molecules");
  for (const char* reverse : {"", "--no-reverse"}) {
    const bool without = *reverse != '\0';
    for (int parts : {1, 2}) {
      const std::string config = ws.partitioned(molecules, parts, reverse);
      EXPECT_EQ(ws.last_partition_err().find(kWarning) != std::string::npos, without) << ws.last_partition_err();
      if (without) {
        EXPECT_NE(ws.last_partition_err().find("'Compound'"), std::string::npos);
      }
      const Deploy deploy = parts == 1 ? Deploy::kStandalone : Deploy::kLaunch2;
      const std::string out = ws.out_dir(parts + (without ? 10 : 0));
      const CommandResult r = start(ws, deploy, config,
                                    fmt::format("train rgcn {} --n-bases 30 --num-epochs 3 --batch-size 16 --out {}",
                                                parts == 1 ? "--standalone --part-config " + config : "", out),
                                    0, 1);
      expect_clean_run(r, out, fmt::format("{} parts {}", parts, reverse));
      EXPECT_EQ(r.err.find(kWarning) != std::string::npos, without) << r.err;
    }
  }
}

// The command-line flags of a row: every factor named like a flag, a yes/no
// factor as the bare flag when "yes".
std::string flag_line(const std::vector<Factor>& factors, const PairwiseRow& row) {
  std::string line;
  for (size_t i = 0; i < factors.size(); ++i) {
    const Factor& f = factors[i];
    const std::string& value = f.values[row[i]];
    if (f.name[0] != '-' || value == "no") continue;
    line += value == "yes" ? " " + f.name : fmt::format(" {} {}", f.name, value);
  }
  return line;
}

// One run of a node-classification sweep: `command` plus the row's flags.
void run_node_trainer(Workspace& ws, const std::vector<Factor>& f, const PairwiseRow& row, const std::string& command,
                      Deploy deploy, const std::string& config, int samplers, int run) {
  std::string flags = command + flag_line(f, row) + " --num-epochs 2 --eval-batch-size 16 --log-every 5";
  if (deploy == Deploy::kStandalone)
    flags += fmt::format(" --standalone --part-config {} --num-samplers {}", config, samplers);
  const std::string out = ws.out_dir(run);
  SCOPED_TRACE(describe(f, row));
  expect_clean_run(start(ws, deploy, config, flags + " --out " + out, samplers, 1), out, describe(f, row));
}

TEST(ConfigSweep, TrainRgcn) {
  Workspace ws;
  struct Variant { AwkwardGraph graph; std::string partition_flags; };
  const std::vector<AwkwardGraph> graphs = hetero_graphs();
  const std::vector<Variant> variants{{graphs[0], ""},
                                      {graphs[0], "--no-reverse"},
                                      {graphs[1], ""},
                                      {graphs[1], "--add-reverse --balance-train --balance-edges"}};
  std::vector<Factor> f{{"graph", {}},
                        {"deploy", kDeployNames},
                        {"samplers", {"0", "1", "2"}},
                        {"--n-bases", {"-1", "0", "2", "30"}},
                        {"--use-self-loop", {"no", "yes"}},
                        {"--layer-norm", {"no", "yes"}},
                        {"--n-layers", {"1", "2", "3"}},
                        {"--fanout", {"2", "-1", "25"}},
                        {"--fanout-mode", {"total", "per-etype"}},
                        {"--batch-size", {"1", "7", "500"}},
                        {"--dropout", {"0", "0.5"}},
                        {"--sparse-optimizer", {"adam", "adagrad"}}};
  for (const Variant& v : variants) f[0].values.push_back(v.graph.name + " " + v.partition_flags);
  const std::vector<PairwiseRow> rows = design(f, "train rgcn");
  for (size_t k = 0; k < rows.size(); ++k) {
    const Variant& v = variants[rows[k][0]];
    const Deploy deploy = static_cast<Deploy>(rows[k][1]);
    run_node_trainer(ws, f, rows[k], "train rgcn", deploy, ws.partitioned(v.graph, machines(deploy), v.partition_flags),
                     rows[k][2], static_cast<int>(k));
  }
}

TEST(ConfigSweep, TrainSage) {
  Workspace ws;
  const std::vector<AwkwardGraph> graphs = homogeneous_graphs();
  const std::vector<Factor> f{{"graph", {graphs[0].name, graphs[1].name}},
                              {"deploy", kDeployNames},
                              {"samplers", {"0", "1", "2"}},
                              {"--num-layers", {"1", "2", "3"}},
                              {"--fan-out", {"2", "-1", "25"}},
                              {"--aggregator", {"mean", "gcn"}},
                              {"--batch-size", {"1", "16", "1000"}},
                              {"--dropout", {"0", "0.5"}},
                              {"--replace", {"no", "yes"}},
                              {"--cache-remote-features", {"0", "0.1", "1"}}};
  const std::vector<PairwiseRow> rows = design(f, "train sage");
  for (size_t k = 0; k < rows.size(); ++k) {
    const Deploy deploy = static_cast<Deploy>(rows[k][1]);
    run_node_trainer(ws, f, rows[k], "train sage --num-hidden 8", deploy,
                     ws.partitioned(graphs[rows[k][0]], machines(deploy), ""), rows[k][2], static_cast<int>(k));
  }
}

// The flags each model needs for its row widths, as DGL-KE's examples give them.
std::string model_flags(const std::string& model) {
  if (model == "RotatE") return "-de";
  if (model == "ComplEx") return "-de -dr";
  return "";
}

TEST(ConfigSweep, KgeTrain) {
  Workspace ws;
  const AwkwardGraph kg = knowledge_graphs()[0];
  const std::vector<Factor> f{
      {"--model_name", {"TransE_l1", "TransE_l2", "DistMult", "ComplEx", "RotatE", "RESCAL", "TransR", "SimplE"}},
      {"--loss_genre", {"Logsigmoid", "Hinge", "Logistic", "BCE"}},
      {"deploy", kDeployNames},
      {"workers", {"1", "2"}},
      {"-adv", {"no", "yes"}},
      // A batch is whole chunks of --neg_sample_size positives (DGL-KE's
      // rule; other pairs are refused up front), so the two vary together.
      {"batch/negatives", {"1/1", "8/8", "32/1", "32/8"}},
      {"-rc", {"0", "0.00001"}},
  };
  const std::vector<std::pair<int, int>> batch_and_negatives{{1, 1}, {8, 8}, {32, 1}, {32, 8}};
  const std::vector<PairwiseRow> rows = design(f, "kge train");
  for (size_t k = 0; k < rows.size(); ++k) {
    const PairwiseRow& row = rows[k];
    const Deploy deploy = static_cast<Deploy>(row[2]);
    const int workers = row[3] + 1;
    const auto [batch, negatives] = batch_and_negatives.at(row[5]);
    std::string flags = fmt::format(
        "kge train{} {} --batch_size {} --neg_sample_size {} --hidden_dim 8 --max_step 40 --lr 0.05 --log_interval 20 "
        "--test --seed 1",
        flag_line(f, row), model_flags(f[0].values[row[0]]), batch, negatives);
    std::string config;
    if (deploy == Deploy::kStandalone) flags += fmt::format(" --data_path {} --num_proc {}", ws.dataset(kg), workers);
    else config = ws.partitioned(kg, machines(deploy), "", true);
    const std::string out = ws.out_dir(static_cast<int>(k));
    SCOPED_TRACE(describe(f, row));
    expect_clean_run(start(ws, deploy, config, flags + " --save_path " + out, 0, workers), out, describe(f, row));
  }
}

}  // namespace
}  // namespace tessera::testing
