// The runtime snippet of docs/cpp-sdk.md as a program: open a 1-partition graph in
// standalone mode, take this trainer's training nodes, pull their features.
//
//   first_steps data/cora.json
#include <cstdio>

#include <tessera/base/error.h>
#include <tessera/distributed/context.h>
#include <tessera/distributed/dist_graph.h>
#include <tessera/distributed/node_split.h>
#include <tessera/version.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: first_steps <graph>.json (a 1-partition config)\n");
    return 2;
  }
  try {
    tessera::distributed::InitOptions options;
    options.standalone = true;
    options.part_config = argv[1];
    auto ctx = tessera::distributed::initialize(options);
    tessera::distributed::DistGraph g(*ctx);
    auto feat = g.ndata("feat");
    auto train = tessera::distributed::node_split(*ctx, g.ndata("train_mask"));
    tessera::Array rows = feat.pull(train);
    std::printf("tessera %s: %s has %lld nodes; pulled %lld training rows of %lld features\n", tessera::version(),
                g.graph_name().c_str(), static_cast<long long>(g.num_nodes()), static_cast<long long>(rows.shape()[0]),
                static_cast<long long>(rows.shape()[1]));
    ctx->finalize();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "first_steps: %s\n", e.what());
    return 1;
  }
  return 0;
}
