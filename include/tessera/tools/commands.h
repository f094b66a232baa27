// The CLI's subcommands. Each registers its flags (DGL's spellings accepted
// with '-' or '_') and the function that runs it.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera {

void add_gen_command(CLI::App& app);
void add_partition_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_train_command(CLI::App& app);

}  // namespace tessera
