#include "job_runs.h"

#include <signal.h>

#include <chrono>
#include <regex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace tessera::testing {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

JobRun run_job(const std::string& job_command) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_command(job_command);
  return {r.out + r.err, r.exit_code, seconds_since(start)};
}

JobRun run_job_killing(const std::string& job_command, const std::string& log, const std::string& what,
                       const std::function<bool(const std::string&)>& ready, const std::string& role, int machine) {
  const auto start = std::chrono::steady_clock::now();
  BackgroundCommand job(job_command, log);
  std::string text;
  while (!ready(text = read_file(log))) {
    EXPECT_EQ(job.wait(0), -1) << text;
    if (seconds_since(start) > 120) {
      ADD_FAILURE() << "no " << what << " within 120 s:\n" << text;
      return {text};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex("launch: job ([A-Za-z0-9_-]+)"))) << text;
  const std::vector<int> victims = job_processes(m[1].str(), role, machine);
  EXPECT_EQ(victims.size(), 1u) << role << " on machine " << machine << "\n" << text;
  for (int pid : victims) EXPECT_EQ(::kill(pid, SIGKILL), 0);
  const int code = job.wait(300);
  return {read_file(log), code, seconds_since(start)};
}

JobRun run_job_killing_at(const std::string& job_command, const std::string& log, const std::string& marker,
                          const std::string& role, int machine) {
  return run_job_killing(
      job_command, log, "'" + marker + "' in the log",
      [&](const std::string& text) { return text.find(marker) != std::string::npos; }, role, machine);
}

}  // namespace tessera::testing
