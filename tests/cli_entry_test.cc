// The CLI entry point's OpenMP setting (apps/tessera.cc): started without
// OMP_WAIT_POLICY, the binary runs with libgomp waiting passively (no spin
// between parallel regions, which starves co-located servers and sampler
// threads on 2 cores); a setting the user made is kept. libgomp prints what
// it read when OMP_DISPLAY_ENV=verbose; the last print is the process that
// runs (the binary re-execs itself to set the variable).
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace tessera {
namespace {

using testing::CommandResult;
using testing::run_command;

// The last value libgomp printed for `name`, or "" if it printed none.
std::string last_setting(const std::string& output, const std::string& name) {
  const std::string key = name + " = '";
  const size_t at = output.rfind(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return output.substr(begin, output.find('\'', begin) - begin);
}

TEST(CliEntry, OpenMpWaitsPassivelyUnlessTheUserSaysOtherwise) {
  const CommandResult unset =
      run_command(std::string("env -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose ") + TESSERA_BINARY + " --help");
  EXPECT_EQ(unset.exit_code, 0) << unset.err;
  EXPECT_EQ(last_setting(unset.err, "OMP_WAIT_POLICY"), "PASSIVE") << unset.err;
  EXPECT_EQ(last_setting(unset.err, "GOMP_SPINCOUNT"), "0") << "libgomp still spins:\n" << unset.err;

  const CommandResult active =
      run_command(std::string("env OMP_WAIT_POLICY=ACTIVE OMP_DISPLAY_ENV=verbose ") + TESSERA_BINARY + " --help");
  EXPECT_EQ(active.exit_code, 0) << active.err;
  EXPECT_EQ(last_setting(active.err, "OMP_WAIT_POLICY"), "ACTIVE") << active.err;
  EXPECT_NE(last_setting(active.err, "GOMP_SPINCOUNT"), "0") << active.err;
}

}  // namespace
}  // namespace tessera
