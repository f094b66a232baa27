// Flag sets shared by the `tessera kge` subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include "tessera/kge/kge_train.h"

namespace tessera {

// Every flag of `kge train` (dglke_train's), filling `o`.
void add_training_flags(CLI::App* cmd, kge::KgeOptions* o);

// `kge dist_train` (dglke_dist_train): partitions, servers and trainers of a
// job from one command, through tessera launch.
void add_kge_dist_train(CLI::App& kge);

}  // namespace tessera
