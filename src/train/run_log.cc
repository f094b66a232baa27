#include "tessera/train/run_log.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "tessera/base/error.h"

namespace tessera::train {

RunLog::RunLog(const std::string& metrics_path, bool active) : active_(active), tty_(::isatty(STDOUT_FILENO) != 0) {
  if (!active_ || metrics_path.empty()) return;
  metrics_.open(metrics_path, std::ios::trunc);
  if (!metrics_) fail("cannot write the metrics file {}", metrics_path);
}

void RunLog::clear_progress() {
  if (!progress_shown_) return;
  fmt::print("\r\033[K");
  progress_shown_ = false;
}

void RunLog::line(const std::string& text) {
  if (!active_) return;
  clear_progress();
  fmt::print("{}\n", text);
  std::fflush(stdout);
}

void RunLog::metrics(const nlohmann::json& record) {
  if (!active_ || !metrics_.is_open()) return;
  metrics_ << record.dump() << "\n";
  metrics_.flush();
}

void RunLog::progress(int epoch, int64_t done, int64_t total) {
  if (!active_ || !tty_ || total <= 0) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  fmt::print("\repoch {} [{}{}{}] {}/{}", epoch, std::string(filled, '='), filled < kWidth ? ">" : "",
             std::string(std::max(0, kWidth - filled - 1), ' '), done, total);
  std::fflush(stdout);
  progress_shown_ = true;
}

void RunLog::final_metrics(const nlohmann::json& record) {
  if (!active_) return;
  metrics(record);
  clear_progress();
  fmt::print("{}\n", record.dump());
  std::fflush(stdout);
}

}  // namespace tessera::train
