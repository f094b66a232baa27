#include <fmt/format.h>

#include "io/chunked_format.h"
#include "tessera/gen/generators.h"
#include "tessera/io/dataset_io.h"
#include "tools/commands.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

namespace tessera {

void add_gen_command(CLI::App& app) {
  auto options = std::make_shared<GenOptions>();
  auto out = std::make_shared<std::string>();
  auto layout = std::make_shared<std::string>("tessera");
  auto num_chunks = std::make_shared<int>(1);
  CLI::App* cmd = app.add_subcommand("gen", "generate a synthetic dataset (deterministic by --seed)");
  cmd->add_option("kind", options->kind, "products-like | mag-like | kg | rmat")->required();
  cmd->add_option("--nodes", options->nodes, "number of nodes (entities for kg); default: the kind's full scale");
  cmd->add_option("--edges", options->edges, "number of directed edges (triples for kg)");
  cmd->add_option("--feat-dim,--feat_dim", options->feat_dim, "feature dimension");
  cmd->add_option("--classes,--num-classes,--num_classes", options->classes, "number of classes");
  cmd->add_option("--relations", options->relations, "kg: number of relations");
  cmd->add_option("--train-frac,--train_frac", options->train_frac, "fraction of training nodes");
  cmd->add_option("--val-frac,--val_frac", options->val_frac, "fraction of validation nodes");
  cmd->add_option("--test-frac,--test_frac", options->test_frac, "fraction of test nodes");
  cmd->add_flag("--symmetric", options->symmetric, "rmat: store both directions of every edge");
  cmd->add_option("--seed", options->seed, "random seed");
  cmd->add_option("--out,--output", *out, "output directory")->required();
  cmd->add_option("--layout", *layout,
                  "tessera (meta.json + .npy), ogb (OGB's raw csv.gz layout) or chunked (DGL's chunked graph: "
                  "metadata.json + numpy chunks)")
      ->check(CLI::IsMember({"tessera", "ogb", "chunked"}));
  CLI::Option* chunks_option =
      cmd->add_option("--num-chunks,--num_chunks", *num_chunks, "--layout chunked: chunks per edge type and array")
          ->check(CLI::Range(1, 1 << 20));
  cmd->callback([options, out, layout, num_chunks, chunks_option] {
    if (chunks_option->count() > 0 && *layout != "chunked") fail("--num-chunks applies to --layout chunked only");
    Timer timer;
    Dataset d = generate(*options);
    const double gen_s = timer.seconds();
    timer.reset();
    if (*layout == "ogb") write_ogb_dataset(d, *out, d.node_types.size() == 1 ? "random" : "time");
    else if (*layout == "chunked") write_chunked_dataset(d, *out, *num_chunks);
    else write_tessera_dataset(d, *out);
    fmt::print(stderr, "generated {} ({} nodes, {} edges) in {:.1f}s, wrote {} in {:.1f}s, peak RSS {:.2f} GB\n",
               options->kind, d.num_nodes(), d.num_edges(), gen_s, *out, timer.seconds(), peak_rss_bytes() / 1e9);
  });
}

}  // namespace tessera
