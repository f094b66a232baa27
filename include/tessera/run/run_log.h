// What a training run reports: human-readable lines on standard output, a progress bar when standard output is
// a terminal, a JSON-lines metrics file, and, as the very last line, one JSON object with the final metrics for
// scripts. Only the process that logs (trainer 0) writes anything; on the others every call does nothing.
// With describe_run(), run.json beside the metrics file says what ran (command line, versions, hosts, start and
// end time, status, configuration, partition config): `tessera report` draws a run from these two files.
//
// A RunLog owns its metrics file (truncated when opened unless appending, each record flushed at once, closed with the RunLog)
// and shares standard output with the process. It has no locks: use it from one thread. The constructor throws
// tessera::Error naming the metrics file when it cannot be written; the writing calls do not throw for I/O.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {
class Progress;
}  // namespace tessera

namespace tessera::distributed {
class Collectives;
class Context;
}  // namespace tessera::distributed

namespace tessera::run {

class RunLog {
 public:
  // `metrics_path`: the JSON-lines file ("" for none); `active`: false on
  // every trainer but the one that logs; `append`: keep the records already
  // there (a run resumed from a checkpoint) instead of starting the file over.
  RunLog(const std::string& metrics_path, bool active, bool append = false);

  ~RunLog();
  RunLog(RunLog&&) noexcept;
  RunLog& operator=(RunLog&&) noexcept;

  bool active() const { return active_; }
  // Writes run.json beside the metrics file (a temp name, then renamed): `run` (tool, config, part_config,
  // hosts, trainers, ...: what the caller knows) plus what this process knows (command line, working
  // directory, host name, Tessera and libtorch versions, start time) and "status": "running". final_metrics()
  // rewrites it with "finished" and the end time; a RunLog destroyed before that (an error) with "failed".
  void describe_run(const nlohmann::json& run);
  void line(const std::string& text);
  // One JSON object per line in the metrics file (flushed at once).
  void metrics(const nlohmann::json& record);
  // "epoch 3 [=======>      ] 25/50 50% 12/s ETA 0:02" redrawn in place; terminals only.
  void progress(int epoch, int64_t done, int64_t total);
  // The same with any label ("training" for steps); a new label starts a new bar.
  void progress(const std::string& label, int64_t done, int64_t total);
  // Erases the progress bar, if one is drawn: before something else draws its own.
  void clear_progress();
  // The final metrics: written to the metrics file and printed as the last line.
  void final_metrics(const nlohmann::json& record);

 private:
  struct RunFile;
  bool active_;
  bool bars_;  // standard output is a terminal that gets progress bars
  std::string metrics_path_;
  std::ofstream metrics_;
  std::unique_ptr<Progress> bar_;  // the current epoch's, while one is drawn
  std::string bar_label_;
  std::unique_ptr<RunFile> run_file_;
};

// What run.json says of a job: the graph, its partition config (absolute),
// the job ID, the trainers, the machines and the ip_config's hosts.
nlohmann::json describe_job(const distributed::Context& ctx);

// Every trainer's `mine`, by rank, on every trainer (collective): how
// per-trainer metrics reach the logging trainer.
std::vector<nlohmann::json> gather_records(distributed::Collectives& coll, const nlohmann::json& mine);

}  // namespace tessera::run
