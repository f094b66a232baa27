// Helpers for tests: temporary directories, the shared datasets, and running
// the real `tessera` binary.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

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

// Entries of `dir` whose names start with `prefix` (to find leftovers).
int count_entries_with_prefix(const std::string& dir, const std::string& prefix);

}  // namespace tessera::testing
