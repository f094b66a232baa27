#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/progress.h"
#include "launch/launch.h"
#include "launch/ssh.h"
#include "partition/mpi/dist_partition.h"
#include "tessera/job/ip_config.h"
#include "tessera/io/dataset_io.h"
#include "tessera/partition/partition.h"
#include "tessera/partition/partition_config.h"
#include "tessera/base/error.h"
#include "tools/commands.h"
#include "tessera/base/timer.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// Set by mpirun (OpenMPI) or a PMI launcher such as srun: this process is one rank of several.
bool started_as_mpi_rank() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

// `tessera partition --ip-config`: one rank on each machine of the ip_config,
// started by mpirun over ssh (as DistDGL's dispatch step starts its workers),
// running this same binary with the same flags. Returns mpirun's exit code.
int partition_over_ssh(const std::string& ip_config, const launch::SshOptions& ssh, const std::string& mpirun,
                       const std::vector<std::string>& rank_args) {
  const std::vector<job::MachineAddress> machines = job::read_ip_config(ip_config, 1);
  const int ranks = job::count_server_machines(machines, ip_config);
  std::string hosts;
  for (int m = 0; m < ranks; ++m) hosts += (m ? "," : "") + machines[m].ip;
  // OpenMPI splits its ssh command on spaces without a shell: a script keeps
  // Tessera's ssh options (quoted paths, keys) intact.
  const fs::path agent = fs::temp_directory_path() / fmt::format("tessera-mpi-ssh-{}", ::getpid());
  {
    std::ofstream script(agent);
    script << "#!/bin/sh\nexec " << launch::ssh_transport(ssh) << " \"$@\"\n";
    if (!script) fail("{}: cannot write the ssh wrapper for mpirun", agent.string());
  }
  fs::permissions(agent, fs::perms::owner_all);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::string command = fmt::format("{} -np {} --host {} --bind-to none --mca plm_rsh_agent {}{}", mpirun, ranks, hosts,
                                    launch::shell_quote(agent.string()), ::geteuid() == 0 ? " --allow-run-as-root" : "");
  // A sanitizer build's settings reach the ranks too (ssh passes no environment): where reports go, and the
  // suppressions (as the launcher passes them to remote processes).
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"})
    if (std::getenv(name) != nullptr) command += fmt::format(" -x {}", name);
  command += " " + launch::shell_quote(self) + " partition";
  for (const std::string& a : rank_args) command += " " + launch::shell_quote(a);
  fmt::print(stderr, "partition: {} ranks on {} (mpirun over ssh)\n", ranks, hosts);
  std::fflush(stderr);
  const int status = std::system(command.c_str());
  fs::remove(agent);
  if (status == -1) fail("cannot run {}: install OpenMPI (scripts/install-deps)", mpirun);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto options = std::make_shared<PartitionOptions>();
  auto read = std::make_shared<ReadOptions>();
  auto input = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto add_reverse = std::make_shared<bool>(false);
  auto no_reverse = std::make_shared<bool>(false);
  auto rename = std::make_shared<std::string>();
  auto dry_run = std::make_shared<bool>(false);
  auto valid_edges = std::make_shared<double>(0.0);
  auto test_edges = std::make_shared<double>(0.0);
  auto ip_config = std::make_shared<std::string>();
  auto mpirun = std::make_shared<std::string>("mpirun");
  auto ssh = std::make_shared<launch::SshOptions>();
  CLI::App* cmd = app.add_subcommand("partition", "split a dataset into partitions for a cluster");
  cmd->add_option("--input,--dataset", *input, "dataset directory")->required();
  cmd->add_option("--format", read->format, "auto | tessera | chunked | ogb | ogb-mag | kg | openke | udd | rdf");
  cmd->add_option("--split", read->split, "OGB: split/<kind> to use when there are several");
  cmd->add_option("--graph-name,--graph_name", options->graph_name, "name of the partitioned graph (default: dataset name)");
  cmd->add_option("--num-parts,--num_parts,-k", options->num_parts, "number of partitions")->required();
  cmd->add_option("--method,--part-method,--part_method", options->method,
                  "metis | random | parmetis (PT-Scotch over MPI, one rank per machine, chunked input)");
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
  cmd->add_option("--valid-edges,--valid_edges", *valid_edges,
                  "link prediction: hold out this share (below 1) or count of the graph's connected node pairs, "
                  "both directions, as validation edges recorded in the partition (default 0)");
  cmd->add_option("--test-edges,--test_edges", *test_edges,
                  "link prediction: the same for test edges (default 0); --seed picks them");
  cmd->add_flag("--json", *as_json, "print the report as one JSON object (phase times, edge cut, peak RSS)");
  cmd->add_flag("--dry-run,--dry_run", *dry_run,
                "--method parmetis: print the memory each rank will need, and stop before reading any edge");
  cmd->add_option("--ip-config,--ip_config", *ip_config,
                  "--method parmetis: start one rank on each machine of this file (mpirun over ssh)");
  cmd->add_option("--mpirun", *mpirun, "the mpirun that --ip-config runs");
  add_ssh_flags(cmd, *ssh);
  cmd->callback([options, read, input, as_json, add_reverse, no_reverse, rename, dry_run, ip_config, mpirun, ssh,
                 valid_edges, test_edges] {
    check_partition_options(*options);
    const bool chunked = (read->format == "auto" || read->format.empty() ? detect_format(*input) : read->format) ==
                         "chunked";
    if (options->method == "parmetis" || (started_as_mpi_rank() && chunked)) {
      if (!chunked)
        fail("--method parmetis reads DGL's chunked format (a folder with metadata.json); {} is not one: write "
             "it with `tessera gen ... --layout chunked` or DGL's tools/chunk_graph.py", *input);
      if (*add_reverse || !rename->empty() || *valid_edges != 0 || *test_edges != 0)
        fail("--add-reverse, --rename, --valid-edges and --test-edges are not available with distributed "
             "partitioning: prepare the chunked input instead");
      if (!ip_config->empty()) {
        // The ranks get absolute paths: ssh starts them in the same folder only where it exists.
        std::vector<std::string> args = {"--input", fs::absolute(*input).string(), "--out",
                                         fs::absolute(options->out_dir).string(), "--num-parts",
                                         std::to_string(options->num_parts), "--method", options->method, "--seed",
                                         std::to_string(options->seed), "--format", "chunked"};
        if (!options->graph_name.empty()) args.insert(args.end(), {"--graph-name", options->graph_name});
        if (options->balance_train) args.push_back("--balance-train");
        if (options->balance_edges) args.push_back("--balance-edges");
        if (*dry_run) args.push_back("--dry-run");
        if (*as_json) args.push_back("--json");
        const int code = partition_over_ssh(*ip_config, *ssh, *mpirun, args);
        if (code != 0) fail("distributed partitioning failed (mpirun exited with {}); the ranks' errors are above", code);
        return;
      }
      DistributedPartitionRequest request{*input, *options, *dry_run, *as_json};
      const int code = run_distributed_partition(request);
      if (code != 0) fail("distributed partitioning failed");
      return;
    }
    if (*dry_run || !ip_config->empty())
      fail("--dry-run and --ip-config belong to --method parmetis (distributed partitioning)");
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
    hold_out_edges(&d, *valid_edges, *test_edges, options->seed);
    if (!d.held_out_edges.empty())
      fmt::print(stderr, "held out {} validation and {} test edges (both directions) for link prediction\n",
                 d.held_out_edges.count("valid") ? d.held_out_edges["valid"].rows() : 0,
                 d.held_out_edges.count("test") ? d.held_out_edges["test"].rows() : 0);
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
