#include <fmt/format.h>

#include "base/progress.h"
#include "tessera/io/dataset_io.h"
#include "tessera/partition/partition.h"
#include "tessera/partition/partition_config.h"
#include "tessera/base/error.h"
#include "tools/commands.h"
#include "tessera/base/timer.h"

namespace tessera {

void add_partition_command(CLI::App& app) {
  auto options = std::make_shared<PartitionOptions>();
  auto read = std::make_shared<ReadOptions>();
  auto input = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto add_reverse = std::make_shared<bool>(false);
  auto no_reverse = std::make_shared<bool>(false);
  auto rename = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("partition", "split a dataset into partitions for a cluster");
  cmd->add_option("--input,--dataset", *input, "dataset directory")->required();
  cmd->add_option("--format", read->format, "auto | tessera | ogb | ogb-mag | kg | openke | udd | rdf");
  cmd->add_option("--split", read->split, "OGB: split/<kind> to use when there are several");
  cmd->add_option("--graph-name,--graph_name", options->graph_name, "name of the partitioned graph (default: dataset name)");
  cmd->add_option("--num-parts,--num_parts,-k", options->num_parts, "number of partitions")->required();
  cmd->add_option("--method,--part-method,--part_method", options->method, "metis | random");
  cmd->add_flag("--balance-train,--balance_train", options->balance_train, "balance training nodes across partitions");
  cmd->add_flag("--balance-edges,--balance_edges", options->balance_edges, "balance in-edges across partitions");
  cmd->add_option("--seed", options->seed, "random seed (METIS and random partitioning)");
  cmd->add_option("--out,--output", options->out_dir, "output directory")->required();
  cmd->add_flag("--add-reverse,--add_reverse", *add_reverse,
                "add a reverse edge type rev-<relation> for every edge type (R-GCN on ogbn-mag); RDF input "
                "gets them by default");
  cmd->add_flag("--no-reverse,--no_reverse", *no_reverse,
                "RDF input: leave out the inverse relations rev-<predicate> that DGL's RDF datasets include "
                "(the labelled type may then receive no messages)");
  cmd->add_option("--rename", *rename,
                  "rename node data, OLD=NEW[,OLD=NEW...] (DGL's example scripts read features / labels: "
                  "--rename feat=features,label=labels)");
  cmd->add_flag("--json", *as_json, "print the report as one JSON object (phase times, edge cut, peak RSS)");
  cmd->callback([options, read, input, as_json, add_reverse, no_reverse, rename] {
    check_partition_options(*options);
    if (*add_reverse && *no_reverse) fail("--add-reverse and --no-reverse contradict each other: give one");
    Timer timer;
    ReadOptions how = *read;
    if (how.format == "auto" || how.format.empty()) how.format = detect_format(*input);  // once: rdf decides below
    Dataset d = [&] {
      Progress phase("partition: read " + *input, 0);
      return read_dataset(*input, how);
    }();
    // DGL's RDF datasets (AIFB, MUTAG, BGS, AM) include every predicate's
    // inverse: labelled entities are often only subjects, and without the
    // inverse they would receive no messages.
    if (*add_reverse || (how.format == "rdf" && !*no_reverse)) add_reverse_edges(&d);
    if (!rename->empty()) rename_node_data(&d, *rename);
    PartitionOptions o = *options;
    if (o.graph_name.empty()) o.graph_name = d.name;
    const double read_s = timer.seconds();
    fmt::print(stderr, "read {} ({} node types, {} edge types, {} nodes, {} edges) in {:.2f}s\n", *input,
               d.node_types.size(), d.edge_types.size(), d.num_nodes(), d.num_edges(), read_s);
    PartitionReport r = partition_dataset(d, o);
    r.read_s = read_s;
    const PartitionConfig written = PartitionConfig::load(fmt::format("{}/{}.json", o.out_dir, o.graph_name));
    for (const std::string& ntype : written.labelled_types_without_in_edges())
      fmt::print(stderr, "{}\n", PartitionConfig::without_in_edges_warning(ntype));
    fmt::print(stderr, "{} partitioning into {}: {:.2f}s, reshuffle {:.2f}s, write {:.2f}s\n", o.method, o.num_parts,
               r.assign_s, r.reshuffle_s, r.write_s);
    const double total = r.read_s + r.assign_s + r.reshuffle_s + r.write_s;
    if (*as_json) {
      fmt::print("{{\"graph_name\": \"{}\", \"num_parts\": {}, \"method\": \"{}\", \"read_s\": {:.3f}, "
                 "\"assign_s\": {:.3f}, \"reshuffle_s\": {:.3f}, \"write_s\": {:.3f}, \"total_s\": {:.3f}, "
                 "\"edge_cut_ratio\": {:.5f}, \"peak_rss_bytes\": {}}}\n",
                 o.graph_name, o.num_parts, o.method, r.read_s, r.assign_s, r.reshuffle_s, r.write_s, total,
                 r.edge_cut_ratio(), peak_rss_bytes());
      return;
    }
    fmt::print("partitioned {} into {} parts ({}): edge cut {:.2f}%, total {:.2f}s "
               "(read {:.2f}s, assign {:.2f}s, reshuffle {:.2f}s, write {:.2f}s), peak RSS {:.2f} GB -> {}/{}.json\n",
               o.graph_name, o.num_parts, o.method, 100 * r.edge_cut_ratio(), total,
               r.read_s, r.assign_s, r.reshuffle_s, r.write_s, peak_rss_bytes() / 1e9, o.out_dir, o.graph_name);
  });
}

}  // namespace tessera
