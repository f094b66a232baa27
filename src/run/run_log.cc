#include "tessera/run/run_log.h"

#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "base/progress.h"
#include "io/staged_dir.h"
#include "tessera/base/blas.h"
#include "tessera/base/threads.h"
#include "tessera/base/error.h"
#include "tessera/base/process.h"
#include "tessera/distributed/collectives.h"
#include "tessera/distributed/context.h"
#include "tessera/job/ip_config.h"
#include "tessera/version.h"

namespace tessera::run {

// run.json while the run lasts: written at describe_run(), rewritten when the run ends. Its destructor is the
// "failed" path: a RunLog that goes away before final_metrics() was unwound by an error.
struct RunLog::RunFile {
  std::string path;
  nlohmann::json run;
  bool ended = false;

  // Arguments and paths need not be UTF-8: such bytes become U+FFFD rather than an exception.
  void write() const { write_text_file(path, run.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); }
  void end(const char* status) {
    run["status"] = status;
    run["end_time"] = utc_now();
    ended = true;
    write();
  }
  ~RunFile() {
    if (ended) return;
    try {
      end("failed");
    } catch (...) {
      // The run is failing already; its own error is the one to report.
    }
  }
  static std::string utc_now() { return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr))); }
};

RunLog::RunLog(const std::string& metrics_path, bool active, bool append)
    : active_(active), bars_(active && Progress::enabled(stdout)), metrics_path_(metrics_path) {
  if (!active_ || metrics_path.empty()) return;
  metrics_.open(metrics_path, append ? std::ios::app : std::ios::trunc);
  if (!metrics_) fail("cannot write the metrics file {}", metrics_path);
}

RunLog::~RunLog() = default;
RunLog::RunLog(RunLog&&) noexcept = default;
RunLog& RunLog::operator=(RunLog&&) noexcept = default;

void RunLog::describe_run(const nlohmann::json& run) {
  if (!active_ || metrics_path_.empty()) return;
  auto file = std::make_unique<RunFile>();
  file->path = (std::filesystem::path(metrics_path_).parent_path() / "run.json").string();
  file->run = run;
  file->run["command"] = process_arguments();
  file->run["cwd"] = std::filesystem::current_path().string();
  file->run["hostname"] = host_name();
  file->run["versions"] = {{"tessera", version()}, {"libtorch", fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH)}};
  file->run["start_time"] = RunFile::utc_now();
  file->run["status"] = "running";
  file->write();
  run_file_ = std::move(file);
}

nlohmann::json describe_job(const distributed::Context& ctx) {
  nlohmann::json hosts = nlohmann::json::array();
  const job::JobEnv& env = ctx.env();
  if (!ctx.standalone())
    for (const job::MachineAddress& m : job::read_ip_config(env.ip_config, env.num_servers))
      hosts.push_back({{"host", m.host}, {"ip", m.ip}, {"base_port", m.base_port}});
  return {{"graph_name", ctx.config().graph_name},
          {"part_config", std::filesystem::absolute(ctx.part_config_path()).string()},
          {"job_id", env.job_id},
          {"trainers", ctx.world_size()},
          {"machines", ctx.standalone() ? 1 : env.num_machines},
          {"hosts", hosts},
          {"blas_kernels", blas_core()},
          {"intra_op_threads", num_threads()}};
}

// A JSON text crosses the trainers as one int64 per byte: the records are a
// few hundred bytes per trainer once per epoch, so packing them tighter buys nothing.
std::vector<nlohmann::json> gather_records(distributed::Collectives& coll, const nlohmann::json& mine) {
  const std::string text = mine.dump();
  const std::vector<std::vector<int64_t>> all = coll.all_gather(std::vector<int64_t>(text.begin(), text.end()));
  std::vector<nlohmann::json> records;
  for (const std::vector<int64_t>& bytes : all)
    records.push_back(nlohmann::json::parse(std::string(bytes.begin(), bytes.end())));
  return records;
}

void RunLog::clear_progress() {
  bar_.reset();
  bar_label_.clear();
}

void RunLog::line(const std::string& text) {
  if (!active_) return;
  if (bar_) {
    bar_->print_above(text + "\n");
    return;
  }
  fmt::print("{}\n", text);
  std::fflush(stdout);
}

void RunLog::metrics(const nlohmann::json& record) {
  if (!active_ || !metrics_.is_open()) return;
  metrics_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  metrics_.flush();
}

void RunLog::progress(int epoch, int64_t done, int64_t total) {
  if (!bars_ || total <= 0) return;  // before formatting the label: this runs after every step
  progress(fmt::format("epoch {}", epoch), done, total);
}

void RunLog::progress(const std::string& label, int64_t done, int64_t total) {
  if (!bars_ || total <= 0) return;
  if (!bar_ || bar_label_ != label) {
    bar_.reset();
    bar_ = std::make_unique<Progress>(label, total, stdout, true, done);
    bar_label_ = label;
  }
  bar_->set(done);
  if (done >= total) clear_progress();  // out of the way of the epoch's line and of evaluation's bar
}

void RunLog::final_metrics(const nlohmann::json& record) {
  if (!active_) return;
  metrics(record);
  if (run_file_) {
    run_file_->run["final"] = record;
    run_file_->end("finished");
  }
  clear_progress();
  fmt::print("{}\n", record.dump());
  std::fflush(stdout);
}

}  // namespace tessera::run
