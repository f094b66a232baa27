#include "run/launch_record.h"

#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/staged_dir.h"
#include "tessera/base/error.h"
#include "tessera/base/process.h"

namespace tessera::run {
namespace fs = std::filesystem;
namespace {

std::string utc(double unix_s) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

nlohmann::json outcomes(const std::vector<ProcessOutcome>& all) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessOutcome& p : all) {
    nlohmann::json j = {{"label", p.label},
                        {"role", job::role_name(p.role)},
                        {"host", p.host},
                        {"remote", p.remote},
                        {"start_time", utc(p.start_s)},
                        {"duration_s", p.duration_s},
                        {"exit_code", p.exit_code},
                        {"stopped_by_launcher", p.stopped}};
    j["peak_rss_mb"] = p.peak_rss_bytes >= 0 ? nlohmann::json(p.peak_rss_bytes / 1e6) : nlohmann::json();
    processes.push_back(j);
  }
  return processes;
}

}  // namespace

void write_launch_record(const std::string& path, const LaunchRecord& r) {
  nlohmann::json machines = nlohmann::json::array();
  for (const MachineRecord& m : r.machines)
    machines.push_back(
        {{"host", m.host}, {"ip", m.ip}, {"base_port", m.base_port}, {"local", m.local}, {"client", m.client}});
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& [code, processes] : r.failed_attempts)
    failed.push_back({{"exit_code", code}, {"processes", outcomes(processes)}});
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const nlohmann::json record = {{"job_id", r.job_id},
                                 {"launcher_command", process_arguments()},
                                 {"launcher_host", host_name()},
                                 {"command", r.command},
                                 {"workspace", r.workspace},
                                 {"ip_config", r.ip_config},
                                 {"part_config", r.part_config},
                                 {"num_servers", r.num_servers},
                                 {"trainers_per_machine", r.trainers_per_machine},
                                 {"machines", machines},
                                 {"start_time", utc(r.start_s)},
                                 {"end_time", utc(now)},
                                 {"duration_s", now - r.start_s},
                                 {"exit_code", r.exit_code},
                                 {"processes", outcomes(r.processes)},
                                 {"failed_attempts", failed}};
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) fail("cannot create the run folder {}: {}", fs::path(path).parent_path().string(), ec.message());
  write_text_file(path, record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace tessera::run
