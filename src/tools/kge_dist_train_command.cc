// `tessera kge dist_train`: DGL-KE's dglke_dist_train. One command on machine
// 0 runs the job on the machines of an ip_config ("IP base_port num_servers"
// lines, as DGL-KE's): it finds the partitions `kge partition` wrote, checks
// every training flag here, and starts servers and `kge train` trainers
// through tessera launch (this host's addresses locally, others over ssh).
// The embeddings land in <path>/ckpts, as DGL-KE leaves them.
#include <filesystem>

#include <fmt/format.h>

#include "launch/launch.h"
#include "launch/ssh.h"
#include "tessera/base/error.h"
#include "tools/commands.h"
#include "tools/kge_flags.h"

namespace tessera {
namespace fs = std::filesystem;
namespace {

struct DistTrainOptions {
  std::string path;       // the workspace on every machine (DGL-KE's --path)
  std::string ip_config;
  int num_client_proc = 1;  // trainers per machine
  launch::SshOptions ssh;
};

// The training flags, checked as `kge train` will read them on every trainer,
// so that a bad one stops the job before anything starts.
kge::KgeOptions checked_training_flags(const std::vector<std::string>& forwarded, bool* gave_data_path,
                                       bool* gave_save_path) {
  CLI::App check;
  check.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  kge::KgeOptions o;
  add_training_flags(&check, &o);
  std::vector<std::string> args(forwarded.rbegin(), forwarded.rend());
  try {
    check.parse(args);
  } catch (const CLI::ParseError& e) {
    fail("kge dist_train: {} (flags other than --path, --ip_config, --num_client_proc and the ssh flags go to "
         "kge train)", e.what());
  }
  kge::validate(o);
  *gave_data_path = check.count("--data_path") > 0;
  *gave_save_path = check.count("--save_path") > 0;
  return o;
}

int run_dist_train(const DistTrainOptions& d, const std::vector<std::string>& forwarded) {
  if (d.num_client_proc < 1) fail("--num_client_proc must be at least 1, got {}", d.num_client_proc);
  if (!fs::is_directory(d.path)) fail("--path {}: not a folder (the job's workspace, as on every machine)", d.path);
  bool gave_data_path = false, gave_save_path = false;
  const kge::KgeOptions o = checked_training_flags(forwarded, &gave_data_path, &gave_save_path);
  const fs::path workspace = fs::absolute(d.path).lexically_normal();
  std::string part_config = o.part_config;
  if (part_config.empty()) {
    if (o.dataset.empty())
      fail("kge dist_train: --dataset is required (the partitions are read from <data_path>/partitions/<dataset>.json)");
    const fs::path data_path = gave_data_path ? fs::absolute(o.data_path) : workspace;
    part_config = (data_path / "partitions" / (o.dataset + ".json")).lexically_normal().string();
    if (!fs::exists(part_config))
      fail("kge dist_train: no partitions at {}: run `tessera kge partition --data_path {} --dataset {} -k <machines>` "
           "first",
           part_config, data_path.string(), o.dataset);
  }
  launch::LaunchOptions l;
  l.workspace = workspace.string();
  l.ip_config = d.ip_config;
  l.part_config = fs::absolute(part_config).string();
  l.num_trainers = d.num_client_proc;
  l.ssh = d.ssh;
  if (!gave_save_path) l.run_dir = (workspace / "ckpts").string();
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) fail("kge dist_train: cannot find this program's path: {}", ec.message());
  l.command = launch::shell_quote(self.string()) + " kge train";
  for (const std::string& a : forwarded) l.command += " " + launch::shell_quote(a);
  return launch::run_launch(l);
}

}  // namespace

void add_kge_dist_train(CLI::App& kge) {
  auto d = std::make_shared<DistTrainOptions>();
  CLI::App* cmd = kge.add_subcommand(
      "dist_train", "train on the machines of an ip_config: servers hold the entities (dglke_dist_train)");
  cmd->allow_extras();
  cmd->add_option("--path", d->path, "the job's workspace on every machine; embeddings land in <path>/ckpts")
      ->required();
  cmd->add_option("--ip_config,--ip-config", d->ip_config, "one line per machine: IP base_port num_servers")
      ->required();
  cmd->add_option("--num_client_proc,--num_client", d->num_client_proc, "trainer processes per machine (default 1)");
  add_ssh_flags(cmd, d->ssh);
  cmd->footer("Every other flag is kge train's (see `tessera kge train --help`) and goes to each trainer.");
  cmd->callback([d, cmd] {
    const int code = run_dist_train(*d, cmd->remaining());
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tessera
