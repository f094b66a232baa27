#include <cstdio>

#include "launch/launch.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "base/progress.h"
#include "host_roles.h"
#include "parallel_commands.h"
#include "ssh.h"
#include "tessera/job/ip_config.h"
#include "tessera/partition/partition_config.h"
#include "tessera/base/error.h"
#include "tessera/base/timer.h"

#include <fmt/core.h>

namespace fs = std::filesystem;

namespace tessera::launch {
namespace {

// Paths relative to the partition config's folder that machine `part` needs
// (part -1: a client machine, which needs only the dataset-level files).
std::vector<std::string> partition_files(const PartitionConfig& config, const std::string& config_name, int part) {
  std::set<std::string> wanted{config_name};
  if (part >= 0) {
    const PartitionFiles& f = config.parts[static_cast<size_t>(part)];
    for (const std::string* p : {&f.node_feats, &f.edge_feats, &f.part_graph, &f.orig_nids, &f.orig_eids})
      wanted.insert(*p);
  }
  for (const auto& [name, path] : config.extra) wanted.insert(path);
  // Every machine ranks the same held-out edges (`train link`).
  for (const auto& [split, path] : config.held_out_edges) wanted.insert(path);
  for (const auto& [ntype, path] : config.node_names) wanted.insert(path);
  if (!config.relation_names.empty()) wanted.insert(config.relation_names);
  std::vector<std::string> present;
  for (const std::string& p : wanted)
    if (!p.empty() && fs::exists(fs::path(config.dir) / p)) present.push_back(p);
  return present;
}

std::string words(const std::vector<std::string>& items, const char* prefix) {
  std::string joined;
  for (const std::string& item : items) joined += " " + shell_quote(prefix + item);
  return joined;
}

// One shell line that copies `items` (relative to `from`, a local folder)
// into `to` on the machine, creating `to` first.
std::string copy_line(const CopyOptions& o, const std::string& host, bool local, const std::string& from,
                      const std::vector<std::string>& items, const std::string& to) {
  if (o.use_rsync) {
    // --relative keeps each item's path below "./"; --out-format lists what
    // was really sent, so a re-run can say "nothing changed".
    const std::string rsync = "rsync -a --relative --out-format='sent %l %n'";
    if (local) return fmt::format("mkdir -p {0} && cd {1} && {2}{3} {0}/", shell_quote(to), shell_quote(from), rsync, words(items, "./"));
    return fmt::format("cd {} && {} --rsync-path={} -e {}{} {}:{}/", shell_quote(from), rsync,
                       shell_quote("mkdir -p " + shell_quote(to) + " && rsync"), shell_quote(ssh_transport(o.ssh)),
                       words(items, "./"), shell_quote(host), shell_quote(to));
  }
  const std::string unpack = "mkdir -p " + shell_quote(to) + " && tar -x -C " + shell_quote(to);
  const std::string pack = fmt::format("cd {} && tar -c{}", shell_quote(from), words(items, "./"));
  if (local) return pack + " | (" + unpack + ")";
  return pack + " | " + ssh_command_line(host, o.ssh, unpack);
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', pos), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(pos, end - pos)) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

void copy_files(const CopyOptions& options) {
  CopyOptions o = options;
  if (o.use_rsync && !on_path("rsync")) {
    fmt::print("copy: rsync is not installed here; sending with tar over ssh\n");
    o.use_rsync = false;
  }
  if (!fs::path(o.workspace).is_absolute()) fail("--workspace {} must be an absolute path (the same on every machine)", o.workspace);
  if (fs::path(o.rel_data_path).is_absolute()) fail("--rel-data-path {} must be relative to the workspace", o.rel_data_path);
  if (!o.script_folder.empty() && !fs::is_directory(o.script_folder))
    fail("--script-folder {} is not a directory", o.script_folder);
  std::vector<job::MachineAddress> machines = job::read_ip_config(o.ip_config, 1);
  const int server_machines = apply_host_roles(&machines, o.server_hosts, o.client_hosts, o.ip_config);
  const PartitionConfig config = PartitionConfig::load(o.part_config);
  if (config.num_parts != server_machines)
    fail("part config {} has {} partitions but ip_config {} lists {} machines holding partitions", o.part_config,
         config.num_parts, o.ip_config, server_machines);
  const std::string data_dir = (fs::path(o.workspace) / o.rel_data_path).lexically_normal().string();
  const std::string config_name = fs::path(o.part_config).filename().string();
  const fs::path ip_config = fs::absolute(o.ip_config);

  std::vector<std::string> lines;
  for (size_t m = 0; m < machines.size(); ++m) {
    const bool local = job::is_local_address(machines[m].ip);
    const std::string& host = machines[m].host;
    std::string line = copy_line(o, host, local, config.dir, partition_files(config, config_name, machines[m].client ? -1 : static_cast<int>(m)), data_dir);
    line += " && " + copy_line(o, host, local, ip_config.parent_path().string(), {ip_config.filename().string()}, o.workspace);
    if (!o.script_folder.empty())
      line += " && " + copy_line(o, host, local, fs::absolute(o.script_folder).string(), {"."}, o.workspace);
    lines.push_back(line);
  }
  Timer timer;
  std::vector<CommandOutcome> outcomes;
  {
    Progress bar("copy: machines", static_cast<int64_t>(lines.size()));
    outcomes = run_in_parallel(lines, 24 * 3600, &bar);
  }
  for (size_t m = 0; m < machines.size(); ++m) {
    const CommandOutcome& r = outcomes[m];
    if (r.exit_code != 0)
      fail("{}:{}: copying to machine {} ({}) failed (exit code {}): {}", o.ip_config, machines[m].line, m,
           machines[m].host, r.exit_code, r.err.empty() ? std::string("no message") : r.err);
    int64_t files = 0, bytes = 0;
    size_t pos = 0;
    while ((pos = r.out.find("sent ", pos)) != std::string::npos) {
      pos += 5;
      const size_t end = r.out.find('\n', pos);
      const std::string entry = r.out.substr(pos, end - pos);
      if (!entry.empty() && entry.back() != '/') {
        ++files;
        bytes += std::stoll(entry);
      }
    }
    if (o.use_rsync) fmt::print("copy: machine {} ({}): {} file(s) sent, {:.1f} MB\n", m, machines[m].host, files, bytes / 1e6);
    else fmt::print("copy: machine {} ({}): sent with tar\n", m, machines[m].host);
  }
  fmt::print("copy: {} machine(s) in {:.1f} s, partitions in {}\n", machines.size(), timer.seconds(), data_dir);
}

}  // namespace tessera::launch
