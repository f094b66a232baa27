// `tessera keygen FILE`: a job key file for processes that srun or mpirun
// start (tessera launch makes its own). Every process of the job reads the
// same file through TESSERA_KEY_FILE; keep it on storage only the job's
// user can read.
#include <fmt/format.h>

#include "net/security.h"
#include "tools/commands.h"

namespace tessera {

void add_keygen_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "keygen", "write a job key file (mode 0600) for jobs that srun / mpirun start: export TESSERA_KEY_FILE=FILE");
  cmd->add_option("file", *path, "the key file to write")->required();
  cmd->callback([path] {
    net::write_key_file(*path, net::generate_job_keys());
    fmt::print("wrote {} (mode 0600): export TESSERA_KEY_FILE={} for every process of the job\n", *path, *path);
  });
}

}  // namespace tessera
