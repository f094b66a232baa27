// Distributed partitioning: real `mpirun` ranks of the `tessera` binary running PT-Scotch on chunked input
// that `tessera gen --layout chunked` wrote. Every output is checked against the dataset it came from
// (partition_check, which does not trust `inspect`), and the one-rank METIS run must write exactly what the
// single-machine partitioner writes. The faults: a missing chunk, a short chunk, and a rank killed mid-write.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/chunked_format.h"
#include "partition_check.h"
#include "tessera/io/npy.h"
#include "test_util.h"
#include "tessera/partition/partition_config.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::PartCounts;
using testing::TempDir;
using testing::run_command;
using testing::run_tessera;

// `mpirun -np N tessera partition ARGS`, as a user runs it (root needs the flag;
// 3 ranks on 2 cores need --oversubscribe).
std::string mpirun_partition(int ranks, const std::string& args) {
  return fmt::format("mpirun --allow-run-as-root --oversubscribe --bind-to none -np {} {} partition {}", ranks,
                     TESSERA_BINARY, args);
}

// A small heterogeneous graph with data on nodes and edges, chunked.
std::string gen_chunked(const TempDir& dir, const std::string& kind, int64_t nodes, int64_t edges, int chunks) {
  const std::string out = dir / (kind + "-chunked");
  const CommandResult r = run_tessera(fmt::format("gen {} --nodes {} --edges {} --feat-dim 8 --seed 3 --layout chunked "
                                                  "--num-chunks {} --out {}", kind, nodes, edges, chunks, out));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return out;
}

// Every file under `a` has the same bytes under `b`, and no file is missing.
void expect_same_tree(const std::string& a, const std::string& b) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(a)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = fs::relative(entry.path(), a).string();
    ASSERT_TRUE(fs::exists(fs::path(b) / relative)) << relative << " missing from " << b;
    EXPECT_EQ(testing::read_file(entry.path()), testing::read_file((fs::path(b) / relative).string())) << relative;
    ++files;
  }
  int other = 0;
  for (const auto& entry : fs::recursive_directory_iterator(b)) other += entry.is_regular_file();
  EXPECT_EQ(files, other);
  EXPECT_GT(files, 10);
}

double edge_cut(const std::string& out) {
  const nlohmann::json report = nlohmann::json::parse(out.substr(out.rfind('{')));
  return report["edge_cut_ratio"].get<double>();
}

// Single-machine METIS and PT-Scotch on `ranks` ranks, on the same input with the same flags, into as many parts;
// PT-Scotch's output checked against the input (every node, edge and row). Wrap calls in ASSERT_NO_FATAL_FAILURE.
struct BothWays {
  double metis_cut = 0, scotch_cut = 0;
  nlohmann::json scotch_report;  // its --json line
  std::vector<PartCounts> counts;
  Dataset original;
};

void partition_both_ways(const TempDir& dir, const std::string& input, const std::string& graph_name, int ranks,
                         const std::string& flags, BothWays* both) {
  const CommandResult metis = run_tessera(
      fmt::format("partition --input {} --num-parts {} {} --json --out {}/metis", input, ranks, flags, dir.path()));
  ASSERT_EQ(metis.exit_code, 0) << metis.err;
  const CommandResult scotch = run_command(mpirun_partition(
      ranks, fmt::format("--input {} --num-parts {} --method parmetis {} --json --out {}/scotch", input, ranks, flags,
                         dir.path())));
  ASSERT_EQ(scotch.exit_code, 0) << scotch.out << scotch.err;
  both->metis_cut = edge_cut(metis.out);
  both->scotch_cut = edge_cut(scotch.out);
  both->scotch_report = nlohmann::json::parse(scotch.out.substr(scotch.out.rfind('{')));
  both->original = read_chunked_dataset(input);
  ASSERT_NO_FATAL_FAILURE(
      testing::check_partitioned(both->original, dir / ("scotch/" + graph_name + ".json"), &both->counts));
}

TEST(DistPartition, OneRankMetisWritesExactlyWhatTheSingleMachinePartitionerWrites) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "mag-like", 6000, 30000, 3);
  const std::string flags = "--num-parts 1 --method metis --balance-train --balance-edges --graph-name g";
  const CommandResult single = run_tessera(fmt::format("partition --input {} {} --out {}/single", input, flags, dir.path()));
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const CommandResult ranks = run_command(mpirun_partition(1, fmt::format("--input {} {} --out {}/mpi", input, flags,
                                                                          dir.path())));
  ASSERT_EQ(ranks.exit_code, 0) << ranks.out << ranks.err;
  EXPECT_NE(ranks.out.find("(metis, 1 ranks)"), std::string::npos) << ranks.out;
  expect_same_tree(dir / "single", dir / "mpi");
}

TEST(DistPartition, ParmetisOnThreeRanksKeepsEveryNodeEdgeAndRow) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "mag-like", 9000, 60000, 4);
  const CommandResult r = run_command(mpirun_partition(
      3, fmt::format("--input {} --num-parts 3 --method parmetis --balance-train --balance-edges --json --out {}/out",
                     input, dir.path())));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Dataset original = read_chunked_dataset(input);
  std::vector<PartCounts> counts;
  ASSERT_NO_FATAL_FAILURE(testing::check_partitioned(original, dir / "out/mag-like.json", &counts));
  ASSERT_EQ(counts.size(), 3u);
  for (const PartCounts& c : counts) EXPECT_GT(c.nodes, 0);
  EXPECT_EQ(run_tessera(fmt::format("inspect {}/out/mag-like.json", dir.path())).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "out/.rank-0"));
  EXPECT_EQ(testing::count_entries_with_prefix(dir.path(), "out.tessera-"), 0);
}

TEST(DistPartition, ParmetisCutIsCloseToMetisOnACommunityGraph) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "products-like", 20000, 200000, 2);
  BothWays both;
  ASSERT_NO_FATAL_FAILURE(partition_both_ways(dir, input, "products-like", 2, "", &both));
  std::printf("edge cut: METIS %.4f, PT-Scotch on 2 ranks %.4f\n", both.metis_cut, both.scotch_cut);
  EXPECT_LE(both.scotch_cut, 1.5 * both.metis_cut + 0.01);
  EXPECT_LE(testing::max_deviation(both.counts, &PartCounts::nodes), 0.10);
}

// A power-law graph (RMAT: hubs, and a third of the nodes without a neighbour) is where PT-Scotch alone stalls:
// the nodes with fewer than two neighbours are placed beside it and the hubs' edges sampled (periphery_fold.h,
// hub_sampling.h). Every node and edge must still be kept, the cut stay within 1.25x of METIS's, and the
// balance hold on the whole graph.
TEST(DistPartition, PowerLawGraphOnThreeRanksIsReducedAndStaysCloseToMetis) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "rmat", 30000, 400000, 3);
  BothWays both;
  ASSERT_NO_FATAL_FAILURE(partition_both_ways(dir, input, "rmat", 3, "--balance-edges", &both));
  EXPECT_GT(both.scotch_report["folded_nodes"].get<int64_t>(), 5000);
  EXPECT_GT(both.scotch_report["sampled_out_entries"].get<int64_t>(), 100000);
  std::printf("RMAT edge cut: METIS %.4f, PT-Scotch on 3 ranks %.4f; edges per part deviate %.3f\n", both.metis_cut,
              both.scotch_cut, testing::max_deviation(both.counts, &PartCounts::edges));
  EXPECT_LE(both.scotch_cut, 1.25 * both.metis_cut);
  EXPECT_LE(testing::max_deviation(both.counts, &PartCounts::edges), 0.10);
}

// Without --balance-edges only nodes are balanced, and on RMAT about 45% of them end up placed after PT-Scotch
// (isolated, or following such a node): PT-Scotch is told it may leave that much imbalance among the rest. Held to
// 3% instead, it forced the hubs apart and its band refinement did not finish on 1M nodes.
TEST(DistPartition, PowerLawGraphBalancedOnNodesUsesTheRoomIsolatedNodesLeave) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "rmat", 30000, 400000, 3);
  BothWays both;
  ASSERT_NO_FATAL_FAILURE(partition_both_ways(dir, input, "rmat", 3, "", &both));
  EXPECT_GT(both.scotch_report["scotch_imbalance"].get<double>(), 0.2);
  std::printf("RMAT edge cut balanced on nodes: METIS %.4f, PT-Scotch on 3 ranks %.4f; nodes per part deviate %.3f\n",
              both.metis_cut, both.scotch_cut, testing::max_deviation(both.counts, &PartCounts::nodes));
  EXPECT_LE(both.scotch_cut, 1.25 * both.metis_cut);
  EXPECT_LE(testing::max_deviation(both.counts, &PartCounts::nodes), 0.035);
  // The room is bounded: no machine is left with isolated nodes only.
  for (const PartCounts& part : both.counts) EXPECT_GT(part.edges, both.original.num_edges() / 20);
}

TEST(DistPartition, DryRunPrintsEachRanksMemoryAndWritesNothing) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "products-like", 4000, 20000, 2);
  const CommandResult r = run_command(mpirun_partition(
      2, fmt::format("--input {} --num-parts 2 --method parmetis --dry-run --out {}/out", input, dir.path())));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 0 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB"), std::string::npos) << r.out;
  // Parts balanced on nodes only: their edges are not bounded, and the dry run says what that could cost.
  EXPECT_NE(r.out.find("if its part takes every edge"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out"));
  const CommandResult balanced = run_command(mpirun_partition(
      2, fmt::format("--input {} --num-parts 2 --method parmetis --balance-edges --dry-run --out {}/out", input,
                     dir.path())));
  ASSERT_EQ(balanced.exit_code, 0) << balanced.out << balanced.err;
  EXPECT_EQ(balanced.out.find("if its part takes every edge"), std::string::npos) << balanced.out;
}

// A failing run: non-zero exit within seconds, the message, no output.
void expect_failed_run(const TempDir& dir, const std::string& command, const std::string& message) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_command(command);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 60) << "a failed distributed partitioning should end every rank within seconds";
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(DistPartition, AMissingOrShortChunkIsNamedAndNothingIsWritten) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "products-like", 3000, 20000, 2);
  const nlohmann::json meta = nlohmann::json::parse(testing::read_file(input + "/metadata.json"));
  const std::string chunk = input + "/" + meta["edges"].begin().value()["data"][1].get<std::string>();
  const std::string args = fmt::format("--input {} --num-parts 2 --method parmetis --out {}/out", input, dir.path());

  fs::rename(chunk, chunk + ".away");
  expect_failed_run(dir, mpirun_partition(2, args), fs::path(chunk).filename().string());
  fs::rename(chunk + ".away", chunk);

  // The same chunk, one edge short: metadata.json disagrees with it.
  {
    const Array edges = read_npy(chunk);
    write_npy(chunk, edges.slice_rows(0, edges.rows() - 1));
  }
  expect_failed_run(dir, mpirun_partition(2, args), fs::path(chunk).filename().string());
  EXPECT_EQ(testing::count_entries_with_prefix(dir.path(), "out.tessera-"), 0);
}

TEST(DistPartition, ARankKilledWhileWritingEndsEveryRankAndLeavesNoPartition) {
  TempDir dir;
  const std::string input = gen_chunked(dir, "products-like", 6000, 40000, 3);
  const std::string log = dir / "job.log";
  // Each rank pauses after writing its partition, before the commit.
  testing::BackgroundCommand job(
      "env TESSERA_FAULT_PARTITION_PAUSE_MS=30000 " +
          mpirun_partition(3, fmt::format("--input {} --num-parts 3 --method parmetis --out {}/out", input, dir.path())),
      log);
  // Rank 1 is the process whose environment says so, once its files are written.
  int victim = -1;
  for (int i = 0; i < 600 && victim < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    bool written = false;
    for (const auto& e : fs::directory_iterator(dir.path()))
      written |= e.path().filename().string().rfind("out.tessera-shared-", 0) == 0 &&
                 fs::exists(e.path() / "part1/orig_eids.npy");
    if (!written) continue;
    for (int pid : testing::processes_matching("partition --input " + input)) {
      const std::string env = testing::read_file(fmt::format("/proc/{}/environ", pid));
      if (env.find(std::string("OMPI_COMM_WORLD_RANK=1") + '\0') != std::string::npos) victim = pid;
    }
  }
  ASSERT_GT(victim, 0) << testing::read_file(log);
  ::kill(victim, SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  const int code = job.wait(60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("mpirun ended %.1f s after rank 1 was killed (exit %d)\n", seconds, code);
  EXPECT_NE(code, 0) << testing::read_file(log);
  EXPECT_NE(code, -1) << "the job still runs a minute after a rank was killed";
  EXPECT_LT(seconds, 30);
  EXPECT_NE(testing::read_file(log).find("rank 1"), std::string::npos) << testing::read_file(log);
  EXPECT_FALSE(fs::exists(dir / "out/products-like.json"));
  EXPECT_TRUE(testing::processes_matching("partition --input " + input).empty());

  // A killed run may leave its staging folder (this one's, and one made here
  // to be sure there is one); the next run into the same output removes
  // them and commits.
  auto staging_folders = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir.path()))
      n += e.path().filename().string().rfind("out.tessera-shared-", 0) == 0;
    return n;
  };
  fs::create_directories(dir / "out.tessera-shared-1-2/part0");
  EXPECT_GE(staging_folders(), 1);
  const CommandResult again = run_command(
      mpirun_partition(3, fmt::format("--input {} --num-parts 3 --method parmetis --out {}/out", input, dir.path())));
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_TRUE(fs::exists(dir / "out/products-like.json"));
  EXPECT_EQ(staging_folders(), 0);
}

}  // namespace
}  // namespace tessera
