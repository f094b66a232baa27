// The ip_config reader (job/ip_config.cc): every server, trainer and
// the launcher read it; users write it by hand. Input: byte 0 picks the
// servers per machine (1..4, as --num-servers would), the rest is the file.
// Host names resolve through fake_resolver.h, not DNS.
#include "fake_resolver.h"
#include "fuzz_util.h"
#include "tessera/job/ip_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  if (size == 0) return 0;
  const int num_servers = 1 + data[0] % 4;
  auto& scratch = fuzz::Scratch::get();
  scratch.fresh();
  const std::string path =
      scratch.write("ip_config.txt", std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  fuzz::expect_rejection_or_success([&] {
    const auto machines = job::read_ip_config(path, num_servers);
    for (const auto& m : machines) (void)m.server_port(num_servers - 1);
  });
  return 0;
}
