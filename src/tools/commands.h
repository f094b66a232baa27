// The CLI's subcommands. Each registers its flags (DGL's spellings accepted
// with '-' or '_') and the function that runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tessera {

namespace launch {
struct SshOptions;
}

void add_gen_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_copy_command(CLI::App& app);
void add_keygen_command(CLI::App& app);
// --ssh-port, --ssh-username, --ssh-key, --ssh-option (launch and copy).
void add_ssh_flags(CLI::App* cmd, launch::SshOptions& ssh);
// --server-hosts / --client-hosts (server-client mode), shared by launch and copy.
void add_host_role_flags(CLI::App* cmd, std::vector<std::string>& server_hosts, std::vector<std::string>& client_hosts);
void add_train_command(CLI::App& app);
void add_kge_command(CLI::App& app);

// The command line with DGL-KE's multi-letter single-dash flags (-adv, -de,
// -dr, -rc, -rn, -pw, -log) in `tessera kge ...` spelled as their long names,
// which CLI11 can parse.
std::vector<std::string> dglke_spellings(int argc, char** argv);

}  // namespace tessera
