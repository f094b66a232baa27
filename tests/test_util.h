// Helpers for tests: temporary directories, the shared datasets, and running
// the real `tessera` binary.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <sys/types.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tessera::testing {

// A fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// ../shared/data next to the source tree, or "" when absent.
std::string shared_data_dir();

// Skips the test with a clear message when a shared dataset is missing.
#define TESSERA_REQUIRE_SHARED(relative, out_var)                                                     \
  std::string out_var = ::tessera::testing::shared_data_dir();                                        \
  if (out_var.empty() || !std::filesystem::exists(out_var + "/" + (relative)))                        \
    GTEST_SKIP() << "shared dataset '" << (relative) << "' not found (expected ../shared/data/"       \
                 << (relative) << " beside the source tree)";                                          \
  out_var += "/" + std::string(relative)

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `tessera <args>` (args already shell-quoted where needed).
CommandResult run_tessera(const std::string& args);

// Runs `tessera <args>` and expects it to fail with `expected` in its
// standard error, as one clean message (no "terminate", no backtrace).
void expect_tessera_error(const std::string& args, const std::string& expected);

// Runs a shell command line; stdout and stderr captured separately.
CommandResult run_command(const std::string& command_line);

// How many times longer the build under test takes than the plain one:
// TESSERA_TEST_TIME_SCALE, which scripts/sanitize sets (ThreadSanitizer 4,
// AddressSanitizer 2), else 1. Waits for a job's own work to end are scaled
// by it; the bounds a test asserts on how fast a fault is detected are not,
// since they are the product's own timeouts.
double test_time_scale();

// A shell command running in the background, its output going to a file.
class BackgroundCommand {
 public:
  BackgroundCommand(const std::string& command_line, const std::string& log_path);
  ~BackgroundCommand();  // kills it if still running
  // Exit code (128+signal when killed), or -1 if still running after
  // `timeout_s` (times test_time_scale()).
  int wait(double timeout_s);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// Binds 127.0.0.1:port (0: any free port) and returns the socket, or -1.
int bind_loopback(int port);

// A base port with `n` consecutive free TCP ports on 127.0.0.1, so tests run
// in parallel do not collide.
int free_port_block(int n);

// Command lines (arguments joined by spaces) of live processes but this one.
std::map<int, std::string> process_command_lines();

// Pids of live processes whose command line contains `needle`.
std::vector<int> processes_matching(const std::string& needle);

std::string read_file(const std::string& path);

// The final-metrics JSON of a training command: the last line of standard
// output (after the launcher's "[m0/trainer/0] " prefix, when launched);
// null when there is none.
nlohmann::json final_metrics(const std::string& out);

// Trainer 0's final record in a launcher's log ("[m0/trainer/0] {...}", or
// "[m0/trainer/0@host] {...}" when it ran over ssh), whose last lines may be
// the launcher's own; null when there is none.
nlohmann::json final_record(const std::string& log);

// Pids of the tessera processes of job `id` (the launcher prints it) in
// `role` ("server", "trainer") on `machine`: the binaries, not the shells
// that started them, found by their environment.
std::vector<int> job_processes(const std::string& id, const std::string& role, int machine);

// An ip_config of `machines` loopback machines with free ports for one
// server each, written to dir/ip_config.txt; returns its path.
std::string loopback_ip_config(const std::string& dir, int machines);

// Entries of `dir` whose names start with `prefix` (to find leftovers).
int count_entries_with_prefix(const std::string& dir, const std::string& prefix);

// Fails the test unless fn throws a tessera::Error whose message contains needle.
void expect_error(const std::function<void()>& fn, const std::string& needle);

// n draws from the standard normal distribution.
inline std::vector<float> normal_floats(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace tessera::testing
