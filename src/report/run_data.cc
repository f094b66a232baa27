#include "report/run_data.h"

#include <filesystem>
#include <fstream>

#include "io/json_file.h"
#include "tessera/base/error.h"
#include "tools/inspect.h"

namespace tessera::report {
namespace fs = std::filesystem;
namespace {

// One record per line; a run that is still going may end in a half-written
// line, which is left out rather than failing the report.
nlohmann::json read_json_lines(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}", path.string());
  nlohmann::json records = nlohmann::json::array();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      records.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::parse_error& e) {
      if (in.peek() == std::char_traits<char>::eof() && line.back() != '}') break;  // the last line, unfinished
      fail("{}:{}: invalid JSON: {}", path.string(), number, e.what());
    }
  }
  return records;
}

nlohmann::json read_if_there(const fs::path& path) {
  if (!fs::exists(path)) return nullptr;
  return read_json_file(path.string(), "cannot read " + path.string());
}

// The partition config behind the run: the trainers' record of it, else the
// launcher's (relative to its workspace).
std::string part_config_of(const nlohmann::json& run, const nlohmann::json& launch) {
  if (run.is_object() && run.contains("part_config")) return run["part_config"].get<std::string>();
  if (launch.is_object() && launch.contains("part_config"))
    return (fs::path(launch["workspace"].get<std::string>()) / launch["part_config"].get<std::string>()).string();
  return "";
}

}  // namespace

nlohmann::json load_run(const std::string& dir) {
  const fs::path folder(dir);
  if (!fs::is_directory(folder)) fail("{}: not a folder (give the --out of a training run, or a launch --run-dir)", dir);
  nlohmann::json r = {{"dir", fs::absolute(folder).lexically_normal().string()},
                      {"name", fs::absolute(folder).lexically_normal().filename().string()},
                      {"notes", nlohmann::json::array()}};
  r["run"] = read_if_there(folder / "run.json");
  r["launch"] = read_if_there(folder / "launch.json");
  const fs::path metrics = folder / "metrics.jsonl";
  r["metrics"] = fs::exists(metrics) ? read_json_lines(metrics) : nlohmann::json::array();
  if (r["run"].is_null() && r["launch"].is_null() && !fs::exists(metrics))
    fail("{}: no run.json, metrics.jsonl or launch.json: not the folder of a Tessera run", dir);
  if (!fs::exists(metrics)) r["notes"].push_back("no metrics.jsonl: no training curves");
  if (r["launch"].is_null()) r["notes"].push_back("no launch.json (tessera launch --run-dir writes it): no per-process record");

  r["partitions"] = nullptr;
  const std::string part_config = part_config_of(r["run"], r["launch"]);
  if (part_config.empty()) {
    r["notes"].push_back("no partition config recorded: no partition chart");
  } else if (!fs::exists(part_config)) {
    r["notes"].push_back("partition config " + part_config + " is not on this machine: no partition chart");
  } else {
    try {
      r["partitions"] = nlohmann::json::parse(inspect_partitions(part_config).json());
      r["partitions"]["config"] = part_config;
    } catch (const Error& e) {
      r["notes"].push_back(std::string("partitions not shown: ") + e.what());
    }
  }
  return r;
}

}  // namespace tessera::report
