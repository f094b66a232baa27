// Multi-process tests of faults and refusals, on real servers and trainers
// started by `tessera launch` on loopback: a killed server, an unreachable
// master, a busy port, a mismatched config, processes and clients without
// the job's key, garbage bytes and messages at a server.
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

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dist_fixture.h"
#include "test_util.h"
#include "tessera/store/shared_memory.h"

namespace tessera::testing {
namespace {

namespace fs = std::filesystem;

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
  EXPECT_EQ(count(r.out, "bad message answered"), 10) << r.out;
  EXPECT_NE(r.out.find("got no answer (no key)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("got no answer (another key)"), std::string::npos) << r.out;
  // The refused client is logged once (CURVE with a stranger's key); the
  // NULL client never reaches ZAP: the mechanisms differ.
  EXPECT_EQ(count(r.err, "refused a connection from 127.0.0.1"), 1) << r.err;
  EXPECT_NE(r.out.find("server kept serving after garbage"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tessera::testing
