#include "launch/launch.h"
#include "tools/commands.h"

namespace tessera {

void add_copy_command(CLI::App& app) {
  auto o = std::make_shared<launch::CopyOptions>();
  auto use_tar = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("copy", "send each machine of an ip_config its partition, the configs and scripts");
  cmd->add_option("--ip-config,--ip_config", o->ip_config, "one line per machine: HOST [base_port [num_servers]]")
      ->required();
  cmd->add_option("--workspace", o->workspace, "absolute folder on every machine the job runs in")->required();
  cmd->add_option("--rel-data-path,--rel_data_path", o->rel_data_path,
                  "where the partitions go, relative to the workspace (default: data)");
  cmd->add_option("--part-config,--part_config", o->part_config, "partition config <out>/<graph>.json")->required();
  cmd->add_option("--script-folder,--script_folder", o->script_folder, "folder whose contents go to the workspace");
  cmd->add_flag("--tar", *use_tar, "send with tar over ssh instead of rsync");
  add_ssh_flags(cmd, o->ssh);
  add_host_role_flags(cmd, o->server_hosts, o->client_hosts);
  cmd->callback([o, use_tar] {
    o->use_rsync = !*use_tar;
    launch::copy_files(*o);
  });
}

}  // namespace tessera
