#include "run/run_data.h"

#include <filesystem>
#include <fstream>

#include "io/json_file.h"
#include "tessera/base/error.h"
#include "partition/inspect.h"

namespace tessera::run {
namespace fs = std::filesystem;
namespace {

// One JSON object per line. A run that is still going may end in a line
// without its newline yet: that one is left out rather than failing the report.
nlohmann::json read_json_lines(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}", path.string());
  nlohmann::json records = nlohmann::json::array();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const bool unfinished = in.eof();  // getline stopped at the end, not at a newline
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded()) {
      if (unfinished) break;
      fail("{}:{}: invalid JSON (expected one metrics record per line)", path.string(), number);
    }
    if (!record.is_object()) fail("{}:{}: expected a JSON object, found {}", path.string(), number, record.type_name());
    records.push_back(std::move(record));
  }
  return records;
}

nlohmann::json read_if_there(const fs::path& path) {
  if (!fs::exists(path)) return nullptr;
  nlohmann::json j = read_json_file(path.string(), "cannot read " + path.string());
  if (!j.is_object()) fail("{}: expected a JSON object, found {}", path.string(), j.type_name());
  return j;
}

std::string string_field(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : "";
}

// The partition config behind the run: the trainers' record of it, else the
// launcher's (relative to its workspace).
std::string part_config_of(const nlohmann::json& run, const nlohmann::json& launch) {
  if (run.is_object() && !string_field(run, "part_config").empty()) return string_field(run, "part_config");
  if (launch.is_object() && !string_field(launch, "part_config").empty())
    return (fs::path(string_field(launch, "workspace")) / string_field(launch, "part_config")).string();
  return "";
}

}  // namespace

nlohmann::json load_run(const std::string& dir) {
  const fs::path folder(dir);
  if (!fs::is_directory(folder))
    fail("{}: not a folder (give the --out of a training run, or a launch --run-dir)", dir);
  fs::path absolute = fs::absolute(folder).lexically_normal();
  if (absolute.filename().empty()) absolute = absolute.parent_path();  // "runs/cora/" or "."
  nlohmann::json r = {{"dir", absolute.string()}, {"name", absolute.filename().string()},
                      {"notes", nlohmann::json::array()}};
  r["run"] = read_if_there(folder / "run.json");
  r["launch"] = read_if_there(folder / "launch.json");
  const fs::path metrics = folder / "metrics.jsonl";
  r["metrics"] = fs::exists(metrics) ? read_json_lines(metrics) : nlohmann::json::array();
  if (r["run"].is_null() && r["launch"].is_null() && !fs::exists(metrics))
    fail("{}: no run.json, metrics.jsonl or launch.json: not the folder of a Tessera run", dir);
  if (!fs::exists(metrics)) r["notes"].push_back("no metrics.jsonl: no training curves");
  if (r["launch"].is_null())
    r["notes"].push_back("no launch.json (tessera launch --run-dir writes it): no per-process record");

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

}  // namespace tessera::run
