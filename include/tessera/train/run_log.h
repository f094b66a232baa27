// What a training run reports: human-readable lines on standard output, a progress bar when standard output is
// a terminal, a JSON-lines metrics file, and, as the very last line, one JSON object with the final metrics for
// scripts. Only the process that logs (trainer 0) writes anything; on the others every call does nothing.
//
// A RunLog owns its metrics file (truncated when opened, each record flushed at once, closed with the RunLog)
// and shares standard output with the process. It has no locks: use it from one thread. The constructor throws
// tessera::Error naming the metrics file when it cannot be written; the writing calls do not throw for I/O.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::train {

class RunLog {
 public:
  // `metrics_path`: the JSON-lines file ("" for none); `active`: false on
  // every trainer but the one that logs.
  RunLog(const std::string& metrics_path, bool active);

  bool active() const { return active_; }
  void line(const std::string& text);
  // One JSON object per line in the metrics file (flushed at once).
  void metrics(const nlohmann::json& record);
  // "epoch 3  [=======>      ] 25/50" redrawn in place; terminals only.
  void progress(int epoch, int64_t done, int64_t total);
  // The final metrics: written to the metrics file and printed as the last line.
  void final_metrics(const nlohmann::json& record);

 private:
  void clear_progress();
  bool active_;
  bool tty_;
  bool progress_shown_ = false;
  std::ofstream metrics_;
};

}  // namespace tessera::train
