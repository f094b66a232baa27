// The single CLI entry point: `tessera <command> ...`.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tessera/tools/commands.h"
#include "tessera/util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: distributed GNN and knowledge-graph embedding training"};
  app.require_subcommand(1);
  tessera::add_gen_command(app);
  tessera::add_partition_command(app);
  tessera::add_inspect_command(app);
  tessera::add_launch_command(app);
  tessera::add_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tessera::Error& e) {
    fmt::print(stderr, "tessera: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "tessera: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessera: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
