// The launcher's job file (`tessera launch --job job.yml`, launch/job_file.cc):
// YAML a user writes, read by read_launch_job(); the ip_config it generates
// from the hosts is then read back as every process of the job reads it
// (read_ip_config), so a host entry that breaks that file shows up too.
// Host names resolve through fake_resolver.h, not DNS.
#include "fake_resolver.h"
#include "fuzz_util.h"
#include "launch/launch.h"
#include "tessera/job/ip_config.h"

namespace tessera::launch {
// The reader never runs the job; this keeps the launcher out of the target.
int run_launch(const LaunchOptions&) { std::abort(); }
}  // namespace tessera::launch

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  auto& scratch = fuzz::Scratch::get();
  const std::string path = fuzz::input_file("job.yml", data, size);
  fuzz::expect_rejection_or_success([&] {
    std::string ip_config_name;
    const launch::LaunchOptions o = launch::read_launch_job(path, &ip_config_name);
    // As the launch plan does (job_plan.cc): --num-servers is 0 (from the
    // ip_config) or 1..64, checked before the ip_config is read.
    if (o.num_servers < 0 || o.num_servers > 64) return;
    const std::string ip_config = scratch.write("ip_config.txt", o.ip_config_text);
    (void)job::read_ip_config(ip_config, o.num_servers > 0 ? o.num_servers : 1);
  });
  return 0;
}
