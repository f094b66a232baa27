// The fixture of the network-fault tests (cluster_network_fault_test.cc for `train sage`,
// cluster_network_fault_jobs_test.cc for `train link`, `train rgcn` and `kge train`): jobs launched from host 0 of
// cluster_fixture.h's simulated cluster with the job's timeout at kFaultTimeoutS, host 1's link cut and restored, and
// the waits with a fixed deadline that the tests need. Not in an anonymous namespace: GoogleTest needs one class
// across the files that use it.
#pragma once

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "test_util.h"

namespace tessera::testing {

constexpr int kFaultTimeoutS = 10;   // every job's --timeout
constexpr double kFaultGraceS = 3;   // the launcher's --grace

class NetworkFault : public Cluster {
 public:  // the tests' free helpers build their command lines with launch()
  // The launcher's command line on host 0 for `program` (a `bin/tessera ...` command) on hosts 0 and 1, with the
  // partition data/<part_config> of the workspace.
  static std::string launch(const std::string& part_config, const std::string& program,
                            const std::string& launch_flags = "") {
    return fmt::format("nsenter -t {} -m -n -- /bin/sh -c {}", first_line(host_dir(0) + "/sshd.pid"),
                       quote(fmt::format("cd {} && bin/tessera launch --ip-config ip_config.txt --part-config "
                                         "data/{} --num-servers 1 --num-trainers 1 --num-samplers 1 --timeout {} {} {} "
                                         "\"{}\"",
                                         workspace(), part_config, kFaultTimeoutS, launch_flags, ssh_flags(),
                                         program)));
  }

  static void set_link(int host, bool up) {
    const CommandResult r = run_command(fmt::format("ip netns exec {} ip link set eth0 {}",
                                                    first_line(host_dir(host) + "/netns"), up ? "up" : "down"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Waits (`limit_s` times test_time_scale() at most: a sanitized job
  // starts and trains slower) for `marker` in the log of a job still running.
  static void wait_for(BackgroundCommand& job, const std::string& log, const std::string& marker, int limit_s = 60) {
    for (int i = 0; i < 10 * limit_s * test_time_scale(); ++i) {
      if (read_file(log).find(marker) != std::string::npos) return;
      ASSERT_EQ(job.wait(0), -1) << "the job ended before '" << marker << "':\n" << read_file(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL() << "no '" << marker << "' within " << limit_s << " s:\n" << read_file(log);
  }

  // Seconds until host `host` has no process of the job and no segment left (up to `limit_s`), or -1.
  static double seconds_until_clean(int host, double limit_s) {
    const auto start = Clock::now();
    while (true) {
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (leftovers(host, false).empty()) return s;
      if (s > limit_s) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // The job id `tessera launch` printed in `log`, or "".
  static std::string job_id(const std::string& log) {
    std::smatch m;
    const std::string text = read_file(log);
    return std::regex_search(text, m, std::regex("launch: job ([A-Za-z0-9_-]+)")) ? m[1].str() : "";
  }

  // The first line of `output` that names a peer of host 1 lost after the timeout: its server by heartbeats
  // ("m1/server/0 (tcp://...) is gone: ... no heartbeat for 10 s") or its trainer by the collective the trainers
  // were in ("got nothing from trainer 1 within 10 s"); "" if none does.
  static std::string lost_peer_line(const std::string& output) {
    const std::string t = std::to_string(kFaultTimeoutS);
    const std::regex line("[^\n]*(m1/server/0 \\(tcp://[0-9.:]+\\) is gone: [^\n]*no heartbeat for " + t +
                          " s|got nothing from trainer 1 within " + t + " s)[^\n]*");
    std::smatch m;
    return std::regex_search(output, m, line) ? m[0].str() : "";
  }
};

}  // namespace tessera::testing
