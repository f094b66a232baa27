// `tessera launch` through the real binary: real processes, real ports, real
// signals. Every test uses its own block of free ports so that parallel ctest
// runs do not collide, and checks that no process it started is left behind.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "tessera/store/shared_memory.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace tessera {
namespace {

using testing::CommandResult;
using testing::run_tessera;
using testing::TempDir;

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Processes whose command line is exactly `command` (not the shells running it).
int count_processes(const std::string& command) {
  int n = 0;
  for (const auto& [pid, cmdline] : testing::process_command_lines()) n += cmdline == command + " ";
  return n;
}

// A marker for `sleep` that no other test or run uses.
std::string unique_sleep(int whole_seconds) {
  return std::to_string(whole_seconds) + "." + std::to_string(::getpid()) + std::to_string(::rand() % 1000);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class Launch : public ::testing::Test {
 protected:
  // One 2-partition graph for the whole suite: partitioning is the slow part.
  static void SetUpTestSuite() {
    graph_ = new TempDir();
    const CommandResult gen = run_tessera("gen products-like --nodes 2000 --edges 20000 --out " + *graph_ / "data");
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    const CommandResult part =
        run_tessera("partition --input " + *graph_ / "data" + " --num-parts 2 --out " + *graph_ / "parts");
    ASSERT_EQ(part.exit_code, 0) << part.err;
  }
  static void TearDownTestSuite() {
    delete graph_;
    graph_ = nullptr;
  }

  static std::string part_config() { return *graph_ / "parts/products-like.json"; }

  std::string write_ip_config(const std::string& text) {
    const std::string path = work_ / "ip_config.txt";
    std::ofstream(path) << text;
    return path;
  }
  // Two machines on this host with `servers` servers each, the second named
  // by host name; returns the path.
  std::string two_machines(int servers) {
    const int span = servers + 1;
    base_ = testing::free_port_block(2 * span);
    return write_ip_config(fmt::format("127.0.0.1 {}\nlocalhost {}\n", base_, base_ + span));
  }
  CommandResult launch(const std::string& flags, const std::string& command) {
    return run_tessera("launch " + flags + " " + quote(command));
  }

  static TempDir* graph_;
  TempDir work_;
  int base_ = 0;
};

TempDir* Launch::graph_ = nullptr;

TEST_F(Launch, TwoMachinesRunEveryServerAndTrainer) {
  const std::string ip = two_machines(2);
  // --workspace and a part config relative to it, as DGL's launch.py takes them.
  const CommandResult r = launch(
      "--workspace " + graph_->path() + " --ip-config " + ip +
          " --part_config parts/products-like.json --num-servers 2 --num_trainers 2",
      "echo \"$TESSERA_ROLE $TESSERA_MACHINE_ID $TESSERA_SERVER_ID$TESSERA_TRAINER_ID\"; "
      "echo \"env $TESSERA_JOB_ID $TESSERA_MASTER_ADDR:$TESSERA_MASTER_PORT $TESSERA_PART_CONFIG $(pwd)\"; "
      "printf 'unterminated %s' $TESSERA_ROLE");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch job;
  ASSERT_TRUE(std::regex_search(r.err, job, std::regex("launch: job ([A-Za-z0-9-]+):"))) << r.err;
  for (int m = 0; m < 2; ++m)
    for (const char* role : {"server", "trainer"})
      for (int id = 0; id < 2; ++id) {
        const std::string label = fmt::format("[m{}/{}/{}] ", m, role, id);
        EXPECT_NE(r.out.find(fmt::format("{}{} {} {}\n", label, role, m, id)), std::string::npos) << label << r.out;
        EXPECT_NE(r.out.find(fmt::format("{}env {} 127.0.0.1:{} {} {}\n", label, job[1].str(), base_, part_config(),
                                         graph_->path())),
                  std::string::npos)
            << label << r.out;
        // A last line without a newline still comes out whole, on its own line.
        EXPECT_NE(r.out.find(fmt::format("{}unterminated {}\n", label, role)), std::string::npos) << label << r.out;
      }
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3 * 8) << r.out;
  EXPECT_EQ(r.err.find("exited with"), std::string::npos) << r.err;
}

TEST_F(Launch, FailedTrainerStopsEveryoneWithItsExitCode) {
  const std::string ip = two_machines(2);
  const std::string marker = "sleep " + unique_sleep(61);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      launch("--ip-config " + ip + " --part-config " + part_config() + " --num-servers 2 --grace 1",
             "if [ \"$TESSERA_ROLE\" = server ]; then " + marker + "; else echo 'trainer failing' >&2; exit 7; fi");
  const double elapsed = seconds_since(start);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_LT(elapsed, 1 + 5) << "grace + 5 s";
  EXPECT_NE(r.err.find("[m0/trainer/0] trainer failing\n"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(launch: m[01]/trainer/0 exited with code 7)"))) << r.err;
  EXPECT_EQ(count_processes(marker), 0) << "servers outlived the launcher";
}

// Starts `tessera launch <args>` in the background, output to files.
pid_t start_launcher(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<std::string> all = {TESSERA_BINARY, "launch"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (const auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  return rc == 0 ? pid : -1;
}

// Polls until `count` processes run `command` (or `timeout_s` passes).
int wait_for_processes(const std::string& command, int count, double timeout_s) {
  int running = count_processes(command);
  for (auto t0 = std::chrono::steady_clock::now(); running != count && seconds_since(t0) < timeout_s;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    running = count_processes(command);
  }
  return running;
}

TEST_F(Launch, SigintOrSigtermStopsEverything) {
  for (const auto& [sig, code] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    const std::string ip = two_machines(1);
    const std::string marker = "sleep " + unique_sleep(62);
    const std::string err = work_ / "err";
    const pid_t pid =
        start_launcher({"--ip-config", ip, "--part-config", part_config(), "echo up; " + marker}, work_ / "out", err);
    ASSERT_GT(pid, 0);
    EXPECT_EQ(wait_for_processes(marker, 4, 30), 4) << testing::read_file(err);
    ASSERT_EQ(::kill(pid, sig), 0);
    const auto stop = std::chrono::steady_clock::now();
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_LT(seconds_since(stop), 5);
    ASSERT_TRUE(WIFEXITED(status)) << "launcher died by a signal";
    EXPECT_EQ(WEXITSTATUS(status), code) << testing::read_file(err);
    EXPECT_EQ(count_processes(marker), 0) << "children outlived the launcher";
    EXPECT_NE(testing::read_file(err).find(sig == SIGINT ? "got SIGINT" : "got SIGTERM"), std::string::npos) << testing::read_file(err);
  }
}

// SIGKILL gives the launcher no chance to clean up: the shells die of their
// parent-death signal and the guardian kills the rest and removes the job's
// shared memory.
TEST_F(Launch, KilledLauncherLeavesNoOrphans) {
  const std::string ip = two_machines(1);
  const std::string marker = "sleep " + unique_sleep(63);
  const std::string err = work_ / "err";
  const pid_t pid = start_launcher({"--ip-config", ip, "--part-config", part_config(),
                                    "touch /dev/shm/tessera.$TESSERA_JOB_ID.m0.$$.x; " + marker},
                                   work_ / "out", err);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(wait_for_processes(marker, 4, 30), 4) << testing::read_file(err);
  std::smatch job;
  const std::string log = testing::read_file(err);
  ASSERT_TRUE(std::regex_search(log, job, std::regex("launch: job ([A-Za-z0-9-]+):"))) << log;
  EXPECT_EQ(store::count_job_segments(job[1].str()), 4);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  EXPECT_EQ(wait_for_processes(marker, 0, 5), 0) << "orphans outlived the launcher";
  for (int i = 0; i < 100 && store::count_job_segments(job[1].str()) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(store::count_job_segments(job[1].str()), 0);
}

TEST_F(Launch, PartitionCountMustMatchMachines) {
  const int base = testing::free_port_block(6);
  const std::string ip =
      write_ip_config(fmt::format("127.0.0.1 {}\n127.0.0.1 {}\n127.0.0.1 {}\n", base, base + 2, base + 4));
  const std::string flag_file = work_ / "started";
  const CommandResult r = launch("--ip-config " + ip + " --part-config " + part_config(), "touch " + flag_file);
  EXPECT_EQ(r.exit_code, 1);
  for (const std::string& needle : {part_config() + " has 2 partitions", ip + " lists 3 machines"})
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << " in: " << r.err;
  EXPECT_FALSE(fs::exists(flag_file)) << "a process was started";
}

TEST_F(Launch, PortInUseIsFoundBeforeStarting) {
  const std::string ip = two_machines(2);
  const int taken = base_ + 3 + 1 + 1;  // machine 1's server 1
  const int fd = testing::bind_loopback(taken);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  const std::string flag_file = work_ / "started";
  const CommandResult r =
      launch("--ip-config " + ip + " --part-config " + part_config() + " --num-servers 2", "touch " + flag_file);
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  const std::string expected = fmt::format("port {} on 127.0.0.1 (server 1 of machine 1, {}:2) is already in use", taken, ip);
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(flag_file)) << "a process was started";
}

TEST_F(Launch, IpConfigErrorsNameFileAndLine) {
  const int base = testing::free_port_block(4);
  const std::string flag_file = work_ / "started";
  struct Case {
    std::string text, expected;
  } cases[] = {
      {fmt::format("127.0.0.1 {}\n127.0.0.300 {}\n", base, base + 2), ":2: '127.0.0.300' is not an IPv4 address"},
      {fmt::format("# comment\n127.0.0.1 {}\n127.0.0.1 70000\n", base), ":3: base port 70000 is outside"},
      {fmt::format("127.0.0.1 {}\n127.0.0.1 {}\n", base, base + 1), ":2: ports"},
      {fmt::format("127.0.0.1 {}  # trailing comment\nbad_host! {}\n", base, base + 2),
       ":2: 'bad_host!' is neither an IPv4 address nor a host name"},
      {fmt::format("127.0.0.1 {} 1 extra\n", base),
       ":1: expected 'HOST [base_port [num_servers]] [server|client]', found 4 fields"},
      {fmt::format("127.0.0.1 {} 1 client\n", base), ":1: a client machine runs no servers"},
      {fmt::format("127.0.0.1 {} client\n", base), ": every machine is a client; at least one must hold a partition"},
  };
  for (const Case& c : cases) {
    const std::string ip = write_ip_config(c.text);
    const CommandResult r = launch("--ip-config " + ip + " --part-config " + part_config(), "touch " + flag_file);
    EXPECT_EQ(r.exit_code, 1) << c.text;
    EXPECT_NE(r.err.find(ip + c.expected), std::string::npos) << "expected '" << ip + c.expected << "' in: " << r.err;
  }
  EXPECT_FALSE(fs::exists(flag_file)) << "a process was started";
}

// --max-restarts: a failed job starts again, TESSERA_RESTART counting the
// attempts, and the launcher's exit code is the last attempt's.
TEST_F(Launch, AFailedJobIsRestartedUpToMaxRestarts) {
  const std::string ip = two_machines(1);
  const std::string attempts = work_ / "attempts";
  // Machine 0's server starts first: it notes the attempt, and every process fails.
  const std::string note = fmt::format(
      "if [ \"$TESSERA_ROLE\" = server ] && [ \"$TESSERA_MACHINE_ID\" = 0 ]; then echo \"attempt ${{TESSERA_RESTART:-0}}\" "
      ">> {}; fi; ",
      attempts);
  const CommandResult failing =
      launch("--ip-config " + ip + " --part-config " + part_config() + " --max-restarts 2", note + "exit 3");
  EXPECT_EQ(failing.exit_code, 3) << failing.err;
  EXPECT_EQ(testing::read_file(attempts), "attempt 0\nattempt 1\nattempt 2\n");
  EXPECT_NE(failing.err.find("restart 2 of 2 on the same machines, with TESSERA_RESTART=2"), std::string::npos)
      << failing.err;

  // One that succeeds on its first restart ends there, with exit code 0.
  fs::remove(attempts);
  const std::string run_dir = work_ / "run";
  const CommandResult recovering =
      launch("--ip-config " + ip + " --part-config " + part_config() + " --max-restarts 5 --run-dir " + run_dir,
             note + "[ \"${TESSERA_RESTART:-0}\" -ge 1 ] || exit 5");
  EXPECT_EQ(recovering.exit_code, 0) << recovering.err;
  EXPECT_EQ(testing::read_file(attempts), "attempt 0\nattempt 1\n");
  // The run record keeps the failed attempt beside the last one.
  const nlohmann::json record = nlohmann::json::parse(testing::read_file(run_dir + "/launch.json"));
  EXPECT_EQ(record["exit_code"], 0);
  ASSERT_EQ(record["failed_attempts"].size(), 1u) << record.dump(1);
  EXPECT_EQ(record["failed_attempts"][0]["exit_code"], 5);
  // The processes that had started when the first one failed, that one among them.
  const nlohmann::json& failed = record["failed_attempts"][0]["processes"];
  EXPECT_TRUE(std::any_of(failed.begin(), failed.end(), [](const nlohmann::json& p) { return p["exit_code"] == 5; }))
      << record.dump(1);

  // No restart without the flag; a negative count is refused up front.
  fs::remove(attempts);
  const CommandResult once = launch("--ip-config " + ip + " --part-config " + part_config(), note + "exit 4");
  EXPECT_EQ(once.exit_code, 4);
  EXPECT_EQ(testing::read_file(attempts), "attempt 0\n");
  const CommandResult negative =
      launch("--ip-config " + ip + " --part-config " + part_config() + " --max-restarts -1", "true");
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_NE(negative.err.find("--max-restarts -1 is outside 0..1000"), std::string::npos) << negative.err;
}

TEST_F(Launch, SharedMemoryIsRemovedAfterFailure) {
  const std::string ip = two_machines(1);
  // Named after the launcher ($PPID), which lives until teardown, so no other
  // launch takes it for a dead process's leftover and removes it first.
  const CommandResult r = launch("--ip-config " + ip + " --part-config " + part_config() + " --grace 0",
                                 "touch /dev/shm/tessera.$TESSERA_JOB_ID.m0.$PPID.x && echo created; exit 1");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::smatch job;
  ASSERT_TRUE(std::regex_search(r.err, job, std::regex("launch: job ([A-Za-z0-9-]+):"))) << r.err;
  EXPECT_NE(r.out.find("] created\n"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(store::count_job_segments(job[1].str()), 0);
  EXPECT_EQ(testing::count_entries_with_prefix("/dev/shm", "tessera." + job[1].str() + "."), 0);
  EXPECT_NE(r.err.find("removed 1 shared-memory segment"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tessera
