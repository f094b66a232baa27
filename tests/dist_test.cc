// Multi-process tests of the distributed runtime: real servers and trainers
// started by `tessera launch` on loopback, running tests/dist/dist_worker.cc,
// which checks results itself. Faults and refusals are in dist_fault_test.cc.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dist_fixture.h"
#include "test_util.h"
#include "tessera/io/dataset_io.h"
#include "tessera/store/shared_memory.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(DistTest, TwoMachinesTwoServersTwoTrainersAndStandaloneAgree) {
  const std::string out = scratch_.path();
  const CommandResult r =
      run_command(launch_command(ip_config(2, 2), 2, 2, 2, fmt::format("check --data {} --out {}", data(), out)));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Every check ran on all 4 trainers, each prefixed with its machine and role.
  for (const char* line : {"pulls match the dataset", "find_edges and in_degrees match the dataset",
                           "all-reduce and all-gather over 4 trainers are correct",
                           "concurrent adds lost nothing (4 trainers x 40 rounds)", "adagrad matches torch.optim",
                           "adam matches torch.optim", "embedding save/load round-trips in original IDs",
                           "persistent tensors survive", "all checks passed"})
    EXPECT_EQ(count(r.out, line), 4) << line << "\n" << r.out;
  for (const char* label : {"[m0/trainer/0]", "[m0/trainer/1]", "[m1/trainer/0]", "[m1/trainer/1]"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label;
  EXPECT_EQ(count(r.err, "shut down"), 4) << r.err;  // 2 machines x (main + backup)

  const std::string id = job_id(r.err);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_EQ(store::count_job_segments(id), 0);
  EXPECT_TRUE(processes_matching(out).empty());

  // Standalone on the 1-partition graph: the same rows for every original ID.
  const CommandResult s = run_command(fmt::format("{} check --data {} --out {} --part-config {}", TESSERA_DIST_WORKER,
                                                  data(), out, part_config(1)));
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("all checks passed"), std::string::npos);
  const std::string distributed = read_file(out + "/feat-distributed.npy");
  ASSERT_GT(distributed.size(), 4000u * 16 * 4);
  EXPECT_EQ(distributed, read_file(out + "/feat-standalone.npy"));
}

// Machines with different trainer counts (DGL cannot): ranks stay dense and
// machine-major, and the collectives span all of them.
TEST_F(DistTest, MachinesWithDifferentTrainerCounts) {
  const std::string out = scratch_.path();
  const CommandResult r = run_command(fmt::format(
      "{} launch --ip-config {} --part-config {} --num-servers 1 --num-trainers 2,1 --timeout 30 \"{} check --data {} "
      "--out {}\"",
      TESSERA_BINARY, ip_config(2, 1), part_config(2), TESSERA_DIST_WORKER, data(), out));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "all checks passed"), 3) << r.out;
  EXPECT_EQ(count(r.out, "all-reduce and all-gather over 3 trainers are correct"), 3) << r.out;
  for (const char* label : {"[m0/trainer/0]", "[m0/trainer/1]", "[m1/trainer/0]"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label;
  EXPECT_EQ(r.out.find("[m1/trainer/1]"), std::string::npos);
  EXPECT_NE(r.err.find("1 servers and 2,1 trainers each"), std::string::npos) << r.err;

  const CommandResult bad = run_command(fmt::format("{} launch --ip-config {} --part-config {} --num-trainers 1,2,3 true",
                                                    TESSERA_BINARY, ip_config(2, 1), part_config(2)));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--num-trainers gives 3 counts but ip_config"), std::string::npos) << bad.err;
}

// Server-client mode: machines without partitions run trainers only and
// reach every row, sample and optimizer step through the servers, with
// roles from the ip_config or from --client-hosts.
TEST_F(DistTest, ClientMachinesWithoutPartitionsRunTheTrainers) {
  const std::string ip = ip_config(3, 1);
  {
    std::ifstream in(ip);
    std::string l0, l1, l2;
    std::getline(in, l0), std::getline(in, l1), std::getline(in, l2);
    std::ofstream(scratch_ / "roles.txt") << l0 << "\n" << l1 << "\n" << l2 << " client\n";
    std::ofstream(scratch_ / "misordered.txt") << l0 << "\n" << l2 << " client\n" << l1 << "\n";
  }
  const std::string client = fmt::format("127.0.0.1:{}", base_port_ + 2 * 3);
  struct Run {
    std::string flags;
    int trainers;
    std::vector<const char*> labels;
  };
  for (const Run& run : {Run{fmt::format("--ip-config {} --num-trainers 2", scratch_ / "roles.txt"), 2,
                             {"[m2/trainer/0]", "[m2/trainer/1]"}},
                         Run{fmt::format("--ip-config {} --client-hosts {} --num-trainers 1,0,2", ip, client), 3,
                             {"[m0/trainer/0]", "[m2/trainer/0]", "[m2/trainer/1]"}}}) {
    const std::string out = scratch_ / fmt::format("run{}", run.trainers);
    fs::create_directories(out);
    const CommandResult r = run_command(fmt::format("{} launch {} --part-config {} --timeout 30 \"{} check --data {} --out {}\"",
                                                    TESSERA_BINARY, run.flags, part_config(2), TESSERA_DIST_WORKER,
                                                    data(), out));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(count(r.out, "all checks passed"), run.trainers) << r.out;
    for (const char* label : run.labels) EXPECT_NE(r.out.find(label), std::string::npos) << label;
    EXPECT_EQ(r.out.find("[m1/trainer/"), std::string::npos) << r.out;
    EXPECT_EQ(count(r.err, "serving partition"), 2) << "servers run on the 2 server machines only: " << r.err;
    EXPECT_EQ(r.err.find("[m2/server/"), std::string::npos) << r.err;
  }

  const CommandResult misordered = run_command(fmt::format("{} launch --ip-config {} --part-config {} true",
                                                           TESSERA_BINARY, scratch_ / "misordered.txt", part_config(2)));
  EXPECT_EQ(misordered.exit_code, 1);
  EXPECT_NE(misordered.err.find("comes after a client machine; list the server machines first"), std::string::npos)
      << misordered.err;
  const CommandResult unknown = run_command(fmt::format("{} launch --ip-config {} --part-config {} --client-hosts 10.9.9.9 true",
                                                        TESSERA_BINARY, ip, part_config(2)));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("--client-hosts: '10.9.9.9' is not a machine of"), std::string::npos) << unknown.err;
  const CommandResult parts = run_command(fmt::format("{} launch --ip-config {} --part-config {} --client-hosts {} true",
                                                      TESSERA_BINARY, ip, part_config(1), client));
  EXPECT_EQ(parts.exit_code, 1);
  EXPECT_NE(parts.err.find("lists 2 machines holding partitions"), std::string::npos) << parts.err;
}

// srun or mpirun start every process themselves; each finds its machine
// and role in the manager's variables and the job runs as under the launcher.
TEST_F(DistTest, StartedBySlurmOrMpirunWithoutTheLauncher) {
  const std::string ip = ip_config(2, 2);
  const std::string job = fmt::format("cm{}", ::getpid());
  for (const std::string manager : {"slurm", "ompi"}) {
    const std::string out = scratch_ / manager;
    fs::create_directories(out);
    std::vector<std::unique_ptr<BackgroundCommand>> processes;
    for (int rank = 0; rank < 8; ++rank) {
      const int node = rank / 4, local = rank % 4;
      const std::string placement =
          manager == "slurm"
              ? fmt::format("SLURM_JOB_ID={}{} SLURM_STEP_ID=0 SLURM_PROCID={} SLURM_NTASKS=8 SLURM_LOCALID={} "
                            "SLURM_NODEID={} SLURM_NNODES=2", job, manager, rank, local, node)
              : fmt::format("TESSERA_JOB_ID={}{} OMPI_COMM_WORLD_RANK={} OMPI_COMM_WORLD_SIZE=8 "
                            "OMPI_COMM_WORLD_LOCAL_RANK={} OMPI_COMM_WORLD_LOCAL_SIZE=4", job, manager, rank, local);
      processes.push_back(std::make_unique<BackgroundCommand>(
          fmt::format("env {} TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} TESSERA_NUM_SERVERS=2 TESSERA_TIMEOUT_S=30 "
                      "{} check --data {} --out {}",
                      placement, ip, part_config(2), TESSERA_DIST_WORKER, data(), out),
          fmt::format("{}/rank{}.log", out, rank)));
    }
    std::string logs;
    for (int rank = 0; rank < 8; ++rank) {
      EXPECT_EQ(processes[rank]->wait(120), 0) << manager << " rank " << rank;
      logs += read_file(fmt::format("{}/rank{}.log", out, rank));
    }
    // Ranks 0, 1 of each node are its servers, 2 and 3 its trainers.
    EXPECT_EQ(count(logs, "all checks passed"), 4) << manager << "\n" << logs;
    EXPECT_EQ(count(logs, "all-reduce and all-gather over 4 trainers are correct"), 4) << logs;
    EXPECT_EQ(count(logs, "shut down"), 4) << logs;
    EXPECT_EQ(store::count_job_segments(manager == "slurm" ? job + manager + "-0" : job + manager), 0);
  }

  // Server-client under srun: node 1's ip_config line says `client`, so
  // both its processes are trainers and node 0's two are servers only.
  std::ifstream in(ip);
  std::string l0, l1;
  std::getline(in, l0), std::getline(in, l1);
  const std::string client_ip = scratch_ / "client_ip.txt";
  std::ofstream(client_ip) << l0 << "\n" << l1 << " client\n";
  const std::string out = scratch_ / "server-client";
  fs::create_directories(out);
  std::vector<std::unique_ptr<BackgroundCommand>> processes;
  for (int rank = 0; rank < 4; ++rank)
    processes.push_back(std::make_unique<BackgroundCommand>(
        fmt::format("env SLURM_JOB_ID={}sc SLURM_STEP_ID=0 SLURM_PROCID={} SLURM_NTASKS=4 SLURM_LOCALID={} "
                    "SLURM_NODEID={} SLURM_NNODES=2 TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} TESSERA_NUM_SERVERS=2 "
                    "TESSERA_TIMEOUT_S=30 {} check --data {} --out {}",
                    job, rank, rank % 2, rank / 2, client_ip, part_config(1), TESSERA_DIST_WORKER, data(), out),
        fmt::format("{}/rank{}.log", out, rank)));
  std::string logs;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(processes[rank]->wait(120), 0) << "server-client rank " << rank;
    logs += read_file(fmt::format("{}/rank{}.log", out, rank));
  }
  EXPECT_EQ(count(logs, "all checks passed"), 2) << logs;
  EXPECT_EQ(count(logs, "all-reduce and all-gather over 2 trainers are correct"), 2) << logs;
  EXPECT_EQ(count(logs, "serving partition 0"), 2) << logs;
}

// The manager's placement must leave trainers on every node.
TEST_F(DistTest, ClusterManagerPlacementErrorsAreClear) {
  const std::string ip = ip_config(2, 1);
  const std::string base = fmt::format("TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={}", ip, part_config(2));
  struct Case {
    std::string env, expected;
  } cases[] = {
      {"SLURM_JOB_ID=1 SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NNODES=2",
       "Slurm runs 1 process(es) per node, but 1 of them are servers"},
      {"SLURM_JOB_ID=1 SLURM_PROCID=0 SLURM_NTASKS=5 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NNODES=2",
       "Slurm: 5 tasks on 2 nodes"},
      {"OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=6 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2",
       "Open MPI gives this job no id; export TESSERA_JOB_ID"},
      {"TESSERA_JOB_ID=x OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=6 OMPI_COMM_WORLD_LOCAL_RANK=0 "
       "OMPI_COMM_WORLD_LOCAL_SIZE=2",
       "Open MPI runs the job on 3 node(s), but " + ip + " lists 2 machine(s)"},
      {"TESSERA_JOB_ID=x OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=0 "
       "OMPI_COMM_WORLD_LOCAL_SIZE=2",
       "ranks must fill the nodes in blocks"},
  };
  for (const Case& c : cases) {
    const CommandResult r = run_command(fmt::format("env {} {} {} check", base, c.env, TESSERA_DIST_WORKER));
    EXPECT_EQ(r.exit_code, 1) << c.env;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << r.err;
  }
}

// A service registered by a test file (tests/dist/service_scenario.cc),
// not the library, answered by both machines' servers: the server
// dispatches whatever its parts registered.
TEST_F(DistTest, AServiceRegisteredByATestIsAnsweredAcrossTwoMachines) {
  const CommandResult r = run_command(launch_command(ip_config(2, 1), 2, 1, 1, "service"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "registered service answered by machine"), 4) << r.out;
}

// 1vsAll and KvsAll with the entity table on the servers
// (tests/dist/kge_shards_scenario.cc): each machine's server scores its own
// shard, and the loss and tables after a step equal the standalone step's;
// requests out of their order, or after their tensor went, are refused.
TEST_F(DistTest, KgeAllEntitiesStepOnTheServersEqualsTheStandaloneStep) {
  const CommandResult r = run_command(launch_command(ip_config(2, 1), 2, 1, 1, "kge-shards"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "kge step on the servers matches the standalone step"), 5) << r.out;
  EXPECT_EQ(count(r.out, "a shard step before its scores is refused"), 1) << r.out;
  EXPECT_EQ(count(r.out, "gradients after the tensor was deleted are refused"), 1) << r.out;
}

// Reads "edge dst times" lines written by `dist_worker sample`.
std::map<int64_t, std::pair<int64_t, int64_t>> read_drawn(const std::string& path) {
  std::map<int64_t, std::pair<int64_t, int64_t>> drawn;
  std::istringstream in(read_file(path));
  int64_t edge, dst, times;
  while (in >> edge >> dst >> times) drawn[edge] = {dst, times};
  return drawn;
}

double chi_square_critical(double dof) {  // p = 1e-4, Wilson-Hilferty
  const double z = 3.719;
  return dof * std::pow(1 - 2 / (9 * dof) + z * std::sqrt(2 / (9 * dof)), 3);
}

// Per-edge-type sampling of a heterogeneous graph (mag-like, with reverse
// edges) across 2 machines with 2 servers each: every trainer's blocks hold
// only dataset edges of the right types and the per-type fanouts.
TEST_F(DistTest, HeterogeneousSamplingKeepsTypesAndPerTypeFanouts) {
  const std::string d = scratch_.path();
  ASSERT_EQ(run_tessera(fmt::format("gen mag-like --nodes 3000 --edges 20000 --out {}/mag", d)).exit_code, 0);
  ASSERT_EQ(run_tessera(fmt::format("partition --input {}/mag --add-reverse --graph-name mag --num-parts 2 --out {}/magp",
                                    d, d)).exit_code, 0);
  const CommandResult r = run_command(fmt::format(
      "{} launch --ip-config {} --part-config {}/magp/mag.json --num-servers 2 --num-trainers 2 --timeout 30 "
      "\"{} hetero-sample --data {}/mag\"",
      TESSERA_BINARY, ip_config(2, 2), d, TESSERA_DIST_WORKER, d));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "heterogeneous sampled edges checked"), 4) << r.out;
}

TEST_F(DistTest, DistributedSamplingHasTheStandaloneDistribution) {
  const std::string out = scratch_.path();
  const CommandResult r =
      run_command(launch_command(ip_config(2, 1), 2, 1, 2, fmt::format("sample --data {} --out {}", data(), out)));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "loader batches with 2 samplers match the dataset"), 4) << r.out;
  EXPECT_EQ(count(r.out, "aggregated loader inputs match the dataset's means"), 4) << r.out;
  EXPECT_EQ(count(r.out, "remote rows served"), 4) << r.out;
  EXPECT_EQ(count(r.out, "sampling checks passed"), 4) << r.out;
  const CommandResult s = run_command(fmt::format("{} sample --data {} --out {} --part-config {} --samplers 0",
                                                  TESSERA_DIST_WORKER, data(), out, part_config(1)));
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("loader batches with 0 samplers match"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("aggregated loader inputs match"), std::string::npos) << s.out;

  // Seeds are original nodes 0..299, each sampled 400 times with fanout 3.
  const Dataset original = read_dataset(data());
  const auto& et = original.edge_types.at(0);
  std::map<int64_t, std::vector<int64_t>> in_edges;  // seed -> its original in-edges
  for (int64_t e = 0; e < et.count(); ++e)
    if (et.dst.data<int64_t>()[e] < 300) in_edges[et.dst.data<int64_t>()[e]].push_back(e);
  const auto distributed = read_drawn(out + "/drawn-distributed.txt");
  const auto standalone = read_drawn(out + "/drawn-standalone.txt");
  ASSERT_FALSE(distributed.empty());
  double x_dist = 0, x_std = 0, x_between = 0, dof = 0;
  for (const auto& [seed, edges] : in_edges) {
    const double degree = static_cast<double>(edges.size());
    const double expected = degree <= 3 ? 400 : 400.0 * 3 / degree;
    for (const int64_t e : edges) {
      const auto d = distributed.find(e), s2 = standalone.find(e);
      const double a = d == distributed.end() ? 0 : d->second.second;
      const double b = s2 == standalone.end() ? 0 : s2->second.second;
      if (degree <= 3) {  // every edge, every time
        EXPECT_EQ(a, 400) << "edge " << e;
        EXPECT_EQ(b, 400) << "edge " << e;
        continue;
      }
      x_dist += (a - expected) * (a - expected) / expected;
      x_std += (b - expected) * (b - expected) / expected;
      if (a + b > 0) x_between += (a - b) * (a - b) / (a + b);
    }
    if (degree > 3) dof += degree - 1;
  }
  ASSERT_GT(dof, 100);
  EXPECT_LT(x_dist, chi_square_critical(dof)) << "distributed draws are not uniform";
  EXPECT_LT(x_std, chi_square_critical(dof)) << "standalone draws are not uniform";
  EXPECT_LT(x_between, chi_square_critical(dof)) << "distributed and standalone draws differ";
}

}  // namespace
}  // namespace tessera::testing
