#include <fmt/format.h>

#include "tools/commands.h"
#include "partition/inspect.h"

namespace tessera {

void add_inspect_command(CLI::App& app) {
  auto config = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("inspect", "validate a partitioned graph and summarise its partitions");
  cmd->add_option("config", *config, "partition config (<out>/<graph>.json)")->required();
  cmd->add_flag("--json", *as_json, "print one JSON object instead of a table");
  cmd->callback([config, as_json] {
    const InspectReport report = inspect_partitions(*config);
    if (*as_json) fmt::print("{}\n", report.json());
    else fmt::print("{}", report.table());
  });
}

}  // namespace tessera
