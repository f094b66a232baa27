// The page of `tessera report`: one self-contained HTML file (Chart.js and
// the runs' data inlined, a policy that forbids loading anything) that
// draws loss and accuracy curves, the time split and throughput per trainer,
// peak memory per process, and the partitions behind each run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::report {

// Debian's Chart.js (libjs-chart.js).
inline constexpr const char* kDebianChartJs = "/usr/share/javascript/chart.js/chart.min.js";

// The page for `runs` (load_run()'s objects; several overlay their curves).
// `chart_js`: the library's source, inlined as it is but for the web
// addresses in its licence comments, whose scheme is dropped so that the
// page names no external URL at all.
std::string render_page(const std::vector<nlohmann::json>& runs, const std::string& chart_js,
                        const std::string& title);

// Chart.js from `path`; fails naming the file and the package that has it.
std::string read_chart_js(const std::string& path);

}  // namespace tessera::report
