// Network faults on the simulated cluster of cluster_fixture.h, for a 2-machine `train sage` launched from host 0
// with the job's timeout (--timeout) at kFaultTimeoutS: host 1's link cut for less than the timeout (the job rides
// through, at the accuracy of an uncut run), cut for good (every process on both hosts ends by itself, the
// launcher within the timeout, naming the peer it lost), and host 1's server stopped (SIGSTOP) past the timeout
// (the job does not hang; --max-restarts finishes it from its last checkpoint). Each has a fixed deadline.
#include <signal.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "job_runs.h"
#include "network_fault_fixture.h"
#include "test_util.h"

namespace tessera::testing {
namespace {

constexpr const char* kLongRun = "--num-epochs 100000 --eval-every 100000";

// The launcher's command line on host 0 for Cora's `train sage` on hosts 0 and 1.
std::string job(const std::string& train_flags, const std::string& launch_flags = "") {
  return NetworkFault::launch("cora.json", fmt::format("bin/tessera train sage {} {}", kSageFlags, train_flags),
                              launch_flags);
}

TEST_F(NetworkFault, LinkCutForLessThanTheTimeoutIsRiddenThrough) {
  ASSERT_EQ(on_host(0, prepare({0, 1})).exit_code, 0);
  const std::string epochs = "--num-epochs 60 --eval-every 60";
  const JobRun plain = run_job(job(epochs + " --out plain"));
  ASSERT_EQ(plain.code, 0) << plain.log;
  const double plain_acc = final_record(plain.log)["test_acc"].get<double>();

  const std::string log = dir() + "/cut5.log";
  const auto start = Clock::now();
  BackgroundCommand cut(job(epochs + " --out cut"), log);
  wait_for(cut, log, "Epoch 00003");
  set_link(1, false);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  set_link(1, true);
  EXPECT_EQ(cut.wait(0), -1) << "the job ended during the cut:\n" << read_file(log);
  const double deadline = plain.seconds + 5 + kFaultTimeoutS + 30;
  const int code = cut.wait(deadline);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string output = read_file(log);
  ASSERT_EQ(code, 0) << output;
  const double acc = final_record(output)["test_acc"].get<double>();
  std::printf("host 1's link cut for 5 s (timeout %d s): exit 0 in %.1f s (uncut %.1f s), test accuracy %.4f "
              "(uncut %.4f)\n", kFaultTimeoutS, seconds, plain.seconds, acc, plain_acc);
  EXPECT_NEAR(acc, plain_acc, 0.02) << output;
  EXPECT_EQ(output.find("restart"), std::string::npos) << output;
  EXPECT_EQ(leftovers_anywhere(), "");
}

TEST_F(NetworkFault, LinkCutForGoodEndsEveryProcessOnBothHostsWithinTheTimeout) {
  ASSERT_EQ(on_host(0, prepare({0, 1})).exit_code, 0);
  const std::string log = dir() + "/cut.log";
  BackgroundCommand job_run(job(kLongRun), log);
  wait_for(job_run, log, "Epoch 00003");
  const auto cut = Clock::now();
  set_link(1, false);
  const int code = job_run.wait(kFaultTimeoutS + kFaultGraceS + 30);
  const double seconds = std::chrono::duration<double>(Clock::now() - cut).count();
  const std::string output = read_file(log);
  EXPECT_NE(code, -1) << "the launcher still runs " << kFaultTimeoutS + kFaultGraceS + 30 << " s after the cut:\n" << output;
  EXPECT_NE(code, 0) << output;
  // The peer that host 0 lost, named with the timeout: its server (by
  // heartbeats) or its trainer (by the collective the trainers were in),
  // whichever the trainer of host 0 was waiting for. Detection takes the
  // timeout; the teardown the grace, and one ssh connect timeout (5 s) trying
  // to check host 1 for leftovers.
  EXPECT_NE(lost_peer_line(output), "") << output;
  EXPECT_LT(seconds, kFaultTimeoutS + kFaultGraceS + 10) << output;
  // Host 1, cut off from the launcher, cleans up by itself: its trainer
  // loses its peers and its server its clients, each after the timeout.
  const double host1_s = seconds_until_clean(1, 2 * kFaultTimeoutS + 20);
  std::printf("host 1's link cut for good (timeout %d s): launcher exited %.1f s after the cut (code %d), host 1 "
              "clean %.1f s later\n", kFaultTimeoutS, seconds, code, host1_s);
  EXPECT_GE(host1_s, 0) << leftovers(1, false);
  // Once the link is back, host 1's ssh sessions learn that their client is
  // gone at their next retransmission (TCP's backoff: up to ~30 s).
  set_link(1, true);
  std::string left;
  for (int i = 0; i < 10 && !(left = leftovers_anywhere()).empty();) ++i;
  EXPECT_EQ(left, "");
}

TEST_F(NetworkFault, ServerStoppedPastTheTimeoutEndsTheJobAndARestartFinishesIt) {
  ASSERT_EQ(on_host(0, prepare({0, 1})).exit_code, 0);
  const std::string epochs = "--num-epochs 200 --eval-every 200";
  const std::string log = dir() + "/stopped.log";
  const auto start = Clock::now();
  BackgroundCommand job_run(job(epochs + " --out stopped", "--max-restarts 1"), log);
  wait_for(job_run, log, "Epoch 00005");
  const std::vector<int> servers = job_processes(job_id(log), "server", 1);
  ASSERT_EQ(servers.size(), 1u) << read_file(log);
  ASSERT_EQ(::kill(servers[0], SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::seconds(kFaultTimeoutS + 5));
  ::kill(servers[0], SIGCONT);  // the launcher may have killed it meanwhile
  const int code = job_run.wait(120);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string output = read_file(log);
  ASSERT_EQ(code, 0) << output;
  // Host 0's trainer notices the stopped server by its heartbeats, or first
  // the trainer of host 1, which waits on that server, by their collective.
  EXPECT_NE(lost_peer_line(output), "") << output;
  EXPECT_NE(output.find("restart 1 of 1 on the same machines"), std::string::npos) << output;
  EXPECT_TRUE(std::regex_search(output, std::regex("resuming after epoch \\d+"))) << output;
  std::printf("host 1's server stopped for %d s (timeout %d s): restarted, exit 0 after %.1f s\n", kFaultTimeoutS + 5,
              kFaultTimeoutS, seconds);
  expect_standalone_accuracy(final_record(output), "stopped and restarted", epochs);
  EXPECT_EQ(leftovers_anywhere(), "");
}

}  // namespace
}  // namespace tessera::testing
