// The single CLI entry point: `tessera <command> ...`.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands.h"
#include "tessera/base/error.h"
#include "tessera/version.h"

// OpenMP threads that spin between parallel regions starve a sampler
// thread or a co-located server on this kind of machine (2 cores), and
// libgomp reads OMP_WAIT_POLICY once, before main: so when it is unset,
// set it to PASSIVE and start again. `tessera launch` sets it for its
// children the same way; an explicit setting is always kept.
void prefer_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::execv("/proc/self/exe", argv);  // returns only on failure: run as we are
}

int main(int argc, char** argv) {
  prefer_passive_openmp(argv);
  CLI::App app{"Tessera: distributed GNN and knowledge-graph embedding training"};
  app.set_version_flag("--version", fmt::format("tessera {} (built with libtorch {}; kernels {})",
                                                tessera::version(), tessera::torch_version(),
                                                tessera::kernel_level()));
  app.require_subcommand(1);
  tessera::add_gen_command(app);
  tessera::add_partition_command(app);
  tessera::add_inspect_command(app);
  tessera::add_report_command(app);
  tessera::add_launch_command(app);
  tessera::add_copy_command(app);
  tessera::add_keygen_command(app);
  tessera::add_train_command(app);
  tessera::add_kge_command(app);
  std::vector<std::string> args = tessera::dglke_spellings(argc, argv);
  std::vector<char*> arg_pointers;
  for (auto& a : args) arg_pointers.push_back(a.data());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tessera::Error& e) {
    fmt::print(stderr, "tessera: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    // Escaped every with_context(): name at least the command.
    std::string command;
    for (const CLI::App* sub = &app; sub != nullptr;) {
      const auto chosen = sub->get_subcommands();
      sub = chosen.empty() ? nullptr : chosen.front();
      if (sub != nullptr) command += (command.empty() ? "" : " ") + sub->get_name();
    }
    fmt::print(stderr, "tessera: error: in `tessera {}`: {}\n", command, tessera::describe(e));
    return 1;
  }
  return 0;
}
