// Multi-process tests of the distributed runtime: real servers and trainers
// started by `tessera launch` on loopback, running tests/dist/dist_worker.cc,
// which checks results itself; faults are injected for real (SIGKILL, busy
// ports, garbage bytes).
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

#include "test_util.h"
#include "tessera/io/dataset_io.h"
#include "tessera/store/shared_memory.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

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
  static TempDir* dir_;
};

TempDir* DistTest::dir_ = nullptr;

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

TEST_F(DistTest, KilledServerFailsEveryTrainerFastAndLeavesNothing) {
  const std::string out = scratch_.path();
  const std::string log = out + "/launch.log";
  BackgroundCommand job(launch_command(ip_config(2, 2), 2, 2, 2, fmt::format("pull-loop --out {}", out)), log);
  // Wait until all 4 trainers are pulling across partitions.
  const auto start = std::chrono::steady_clock::now();
  while (count_entries_with_prefix(out, "pulling-") < 4) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60)) << read_file(log);
    ASSERT_EQ(job.wait(0), -1) << read_file(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int victim = std::stoi(read_file(out + "/server-m1-s0.pid"));
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  const int code = job.wait(30);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  const std::string text = read_file(log);
  EXPECT_NE(code, 0) << text;
  EXPECT_NE(code, -1) << "the launcher did not exit: " << text;
  EXPECT_LT(seconds, 10.0) << text;
  // Each trainer names the dead server itself.
  for (const std::string label : {"[m0/trainer/0]", "[m0/trainer/1]", "[m1/trainer/0]", "[m1/trainer/1]"}) {
    bool named = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      named |= line.rfind(label, 0) == 0 && line.find("server m1/server/0 (tcp://") != std::string::npos &&
               line.find("died") != std::string::npos;
    EXPECT_TRUE(named) << label << " did not report the dead server:\n" << text;
  }
  const std::string id = job_id(text);
  ASSERT_FALSE(id.empty()) << text;
  EXPECT_EQ(store::count_job_segments(id), 0);
  EXPECT_TRUE(processes_matching(out).empty());
}

TEST_F(DistTest, UnreachableMasterIsReportedWithinTheTimeout) {
  const int port = free_port_block(1);  // nothing listens there
  const std::string env = fmt::format(
      "TESSERA_ROLE=trainer TESSERA_JOB_ID=t1 TESSERA_MACHINE_ID=0 TESSERA_NUM_MACHINES=1 TESSERA_TRAINER_ID=0 "
      "TESSERA_NUM_SERVERS=1 TESSERA_NUM_TRAINERS=1 TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} "
      "TESSERA_MASTER_ADDR=127.0.0.1 TESSERA_MASTER_PORT={} TESSERA_TIMEOUT_S=2",
      ip_config(1, 1), part_config(1), port);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_command(fmt::format("env {} {} pull-loop --out {}", env, TESSERA_DIST_WORKER, scratch_.path()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(fmt::format("cannot reach the rendezvous store at 127.0.0.1:{} within 2 s", port)),
            std::string::npos) << r.err;
  EXPECT_LT(seconds, 10.0);
}

TEST_F(DistTest, ProcessWithoutAJobKeyIsRefused) {
  const std::string env = fmt::format(
      "TESSERA_ROLE=server TESSERA_JOB_ID=t4 TESSERA_MACHINE_ID=0 TESSERA_NUM_MACHINES=1 TESSERA_SERVER_ID=0 "
      "TESSERA_NUM_SERVERS=1 TESSERA_NUM_TRAINERS=1 TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} "
      "TESSERA_MASTER_ADDR=127.0.0.1 TESSERA_MASTER_PORT=1",
      ip_config(1, 1), part_config(1));
  const CommandResult none = run_command(fmt::format("env -u TESSERA_KEY_FILE {} {} check", env, TESSERA_DIST_WORKER));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("TESSERA_KEY_FILE is not set"), std::string::npos) << none.err;
  // A key file others may read is refused too, naming the file and the fix.
  const std::string open_key = scratch_ / "open.key";
  ASSERT_EQ(run_tessera("keygen " + open_key).exit_code, 0);
  ::chmod(open_key.c_str(), 0644);
  const CommandResult open =
      run_command(fmt::format("env TESSERA_KEY_FILE={} {} {} check", open_key, env, TESSERA_DIST_WORKER));
  EXPECT_EQ(open.exit_code, 1);
  EXPECT_NE(open.err.find(open_key + " may be read by other users (mode 644)"), std::string::npos) << open.err;
}

TEST_F(DistTest, ServerPortInUseIsReportedBeforeServing) {
  const std::string ip = ip_config(1, 1);
  // Hold server 0's port (base + 1) the way another program would.
  const int fd = bind_loopback(base_port_ + 1);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  const std::string env = fmt::format(
      "TESSERA_ROLE=server TESSERA_JOB_ID=t2 TESSERA_MACHINE_ID=0 TESSERA_NUM_MACHINES=1 TESSERA_SERVER_ID=0 "
      "TESSERA_NUM_SERVERS=1 TESSERA_NUM_TRAINERS=1 TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} "
      "TESSERA_MASTER_ADDR=127.0.0.1 TESSERA_MASTER_PORT={} TESSERA_TIMEOUT_S=5",
      ip, part_config(1), base_port_);
  const CommandResult r = run_command(fmt::format("env {} {} check", env, TESSERA_DIST_WORKER));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(fmt::format("cannot listen on tcp://127.0.0.1:{}", base_port_ + 1)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.err;
  EXPECT_EQ(store::count_job_segments("t2"), 0);

  // Through the launcher: refused before anything starts.
  const int fd2 = bind_loopback(base_port_ + 1);
  ASSERT_GE(fd2, 0);
  ASSERT_EQ(::listen(fd2, 1), 0);
  const CommandResult l = run_command(launch_command(ip, 1, 1, 1, "check"));
  ::close(fd2);
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_NE(l.err.find("already in use"), std::string::npos) << l.err;
  EXPECT_EQ(l.out.find("[m0/"), std::string::npos) << "a process started: " << l.out;
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

TEST_F(DistTest, PartConfigNotMatchingIpConfigIsRefused) {
  const std::string env = fmt::format(
      "TESSERA_ROLE=server TESSERA_JOB_ID=t3 TESSERA_MACHINE_ID=0 TESSERA_NUM_MACHINES=3 TESSERA_SERVER_ID=0 "
      "TESSERA_NUM_SERVERS=1 TESSERA_NUM_TRAINERS=1 TESSERA_IP_CONFIG={} TESSERA_PART_CONFIG={} "
      "TESSERA_MASTER_ADDR=127.0.0.1 TESSERA_MASTER_PORT=1 TESSERA_TIMEOUT_S=2",
      ip_config(3, 1), part_config(2), base_port_);
  const CommandResult r = run_command(fmt::format("env {} {} check", env, TESSERA_DIST_WORKER));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has 2 partitions but"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lists 3 machines"), std::string::npos) << r.err;

  const CommandResult l = run_command(launch_command(ip_config(3, 1), 2, 1, 1, "check"));
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_NE(l.err.find("2 partitions"), std::string::npos) << l.err;
  EXPECT_EQ(l.out.find("[m0/"), std::string::npos) << "a process started: " << l.out;
}

// --insecure: PLAIN instead of CURVE. The job runs, and its token still keeps
// out clients without it (no key, a CURVE key, a wrong token).
TEST_F(DistTest, InsecureJobStillRefusesClientsWithoutItsToken) {
  const std::string out = scratch_.path();
  const std::string log = out + "/launch.log";
  std::string command = launch_command(ip_config(2, 1), 2, 1, 1, fmt::format("pull-loop --out {}", out));
  command.replace(command.find(" launch ") + 8, 0, "--insecure ");
  BackgroundCommand job(command, log);
  const auto start = std::chrono::steady_clock::now();
  while (count_entries_with_prefix(out, "pulling-") < 2) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60)) << read_file(log);
    ASSERT_EQ(job.wait(0), -1) << read_file(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const CommandResult intruder = run_command(fmt::format(
      "{} intrude --endpoints tcp://127.0.0.1:{},tcp://127.0.0.1:{},tcp://127.0.0.1:{}", TESSERA_DIST_WORKER,
      base_port_, base_port_ + 1, base_port_ + 4));
  EXPECT_EQ(count(intruder.out, "greets with PLAIN"), 3) << intruder.out << intruder.err;
  EXPECT_NE(intruder.out.find("intruder: 21 attempts, 21 refused; 3 of 3 ports greet without CURVE"),
            std::string::npos) << intruder.out << intruder.err;
  ASSERT_EQ(job.wait(0), -1) << "the job did not survive the intruder:\n" << read_file(log);
  ASSERT_EQ(::kill(job.pid(), SIGTERM), 0);
  job.wait(30);
  const std::string id = job_id(read_file(log));
  ASSERT_FALSE(id.empty()) << read_file(log);
  EXPECT_FALSE(fs::exists("/dev/shm/tessera-key." + id)) << "the launcher left its key file";
}

// Also the limits and the keys: bytes and frames no server would accept,
// and clients without the job's key, which get no answer at all.
TEST_F(DistTest, GarbageAtAServerGetsErrorRepliesAndServingGoesOn) {
  const CommandResult r = run_command(launch_command(ip_config(1, 1), 1, 1, 1, "garbage"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, "bad message answered"), 6) << r.out;
  EXPECT_NE(r.out.find("got no answer (no key)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("got no answer (another key)"), std::string::npos) << r.out;
  // The refused client is logged once (CURVE with a stranger's key); the
  // NULL client never reaches ZAP: the mechanisms differ.
  EXPECT_EQ(count(r.err, "refused a connection from 127.0.0.1"), 1) << r.err;
  EXPECT_NE(r.out.find("server kept serving after garbage"), std::string::npos) << r.out;
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
  EXPECT_EQ(count(r.out, "remote rows served"), 4) << r.out;
  EXPECT_EQ(count(r.out, "sampling checks passed"), 4) << r.out;
  const CommandResult s = run_command(fmt::format("{} sample --data {} --out {} --part-config {} --samplers 0",
                                                  TESSERA_DIST_WORKER, data(), out, part_config(1)));
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("loader batches with 0 samplers match"), std::string::npos) << s.out;

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
