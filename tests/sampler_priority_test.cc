// lower_sampler_priority (tessera/base/threads.h): the calling thread, and
// only it, runs TESSERA_SAMPLER_NICE (default kSamplerNice) nice levels
// below where it was; 0 leaves it alone; a malformed value is an error that
// names the variable. Each test changes the environment of its own process
// (CTest runs every gtest case alone).
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/base/error.h"
#include "tessera/base/threads.h"

namespace tessera {
namespace {

int own_nice() { return getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }

// The nice value of a fresh thread before and after the call.
std::pair<int, int> in_a_thread() {
  std::pair<int, int> seen;
  std::thread([&] {
    seen.first = own_nice();
    lower_sampler_priority();
    seen.second = own_nice();
  }).join();
  return seen;
}

TEST(SamplerPriority, TheDefaultLowersTheCallingThreadOnly) {
  ::unsetenv("TESSERA_SAMPLER_NICE");
  const int main_before = own_nice();
  const auto [before, after] = in_a_thread();
  EXPECT_EQ(before, main_before) << "a new thread starts at its creator's nice value";
  EXPECT_EQ(after, std::min(19, before + kSamplerNice));
  EXPECT_EQ(own_nice(), main_before) << "the trainer's own thread keeps its priority";
}

TEST(SamplerPriority, TheEnvironmentSetsHowFarAndZeroLeavesItAlone) {
  ::setenv("TESSERA_SAMPLER_NICE", "12", 1);
  auto [before, after] = in_a_thread();
  EXPECT_EQ(after, std::min(19, before + 12));
  ::setenv("TESSERA_SAMPLER_NICE", "0", 1);
  std::tie(before, after) = in_a_thread();
  EXPECT_EQ(after, before);
}

TEST(SamplerPriority, AMalformedValueIsRefusedByName) {
  for (const char* bad : {"abc", "20", "-1", "5x", "nice"}) {
    ::setenv("TESSERA_SAMPLER_NICE", bad, 1);
    std::string message;
    std::thread([&] {
      try {
        lower_sampler_priority();
      } catch (const Error& e) {
        message = e.what();
      }
    }).join();
    EXPECT_NE(message.find("TESSERA_SAMPLER_NICE is '" + std::string(bad) + "'"), std::string::npos)
        << "value '" << bad << "': " << message;
  }
}

}  // namespace
}  // namespace tessera
