#include <filesystem>

#include <fmt/format.h>

#include "io/staged_dir.h"
#include "report/report_page.h"
#include "run/run_data.h"
#include "tools/commands.h"

namespace tessera {

void add_report_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>("report.html");
  auto title = std::make_shared<std::string>();
  auto chart_js = std::make_shared<std::string>(report::kDebianChartJs);
  CLI::App* cmd = app.add_subcommand(
      "report", "draw runs as one self-contained HTML page: curves, time split, throughput, memory, partitions");
  cmd->add_option("runs", *dirs,
                  "run folders (a trainer's --out / --save_path, or a launch --run-dir); several overlay their curves")
      ->required();
  cmd->add_option("-o,--output", *out, "the page to write (default report.html)");
  cmd->add_option("--title", *title, "the page's heading (default: the run folders' names)");
  cmd->add_option("--chart-js", *chart_js, "Chart.js to inline (default: Debian's libjs-chart.js)");
  cmd->callback([dirs, out, title, chart_js] {
    std::vector<nlohmann::json> runs;
    std::string names;
    for (const std::string& dir : *dirs) {
      runs.push_back(run::load_run(dir));
      names += (names.empty() ? "" : ", ") + runs.back()["name"].get<std::string>();
    }
    const std::string page =
        report::render_page(runs, report::read_chart_js(*chart_js), title->empty() ? "Tessera: " + names : *title);
    write_text_file(*out, page);
    for (const auto& r : runs)
      for (const auto& note : r["notes"])
        fmt::print(stderr, "report: {}: {}\n", r["name"].get<std::string>(), note.get<std::string>());
    fmt::print("wrote {} ({} run{}, {:.0f} kB)\n", *out, runs.size(), runs.size() == 1 ? "" : "s", page.size() / 1e3);
  });
}

}  // namespace tessera
