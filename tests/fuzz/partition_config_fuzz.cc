// The partition config (<out>/<graph>.json, PartitionConfig::load): every
// server and trainer reads it, and it may come from another machine or an
// older Tessera. The input is the whole file; a config that loads is then
// queried the way the partition book and the trainers do, so that
// inconsistencies load() lets through show up as crashes.
#include "fuzz_util.h"
#include "tessera/partition/partition_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string path = fuzz::input_file("g.json", data, size);
  fuzz::expect_rejection_or_success([&] {
    const PartitionConfig c = PartitionConfig::load(path);
    for (int p = 0; p < c.num_parts; ++p) {
      const IdRange nodes = c.part_nodes(p);
      (void)c.part_edges(p);
      if (nodes.first < nodes.second) {
        (void)c.node_owner(nodes.first);
        (void)c.node_type_of(nodes.second - 1);
      }
    }
    for (size_t e = 0; e < c.etypes.size(); ++e) {
      (void)c.etype_src(static_cast<int>(e));
      (void)c.etype_dst(static_cast<int>(e));
      (void)c.etype_count(static_cast<int>(e));
    }
    (void)c.labelled_types_without_in_edges();
    (void)c.to_json();
  });
  return 0;
}
