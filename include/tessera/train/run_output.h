// Where a trainer writes and what its run says about itself: the output folder, the run log (metrics.jsonl and
// run.json) and the shared options as run.json's config. Only the logging trainer (rank 0) writes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tessera/distributed/context.h"
#include "tessera/run/run_log.h"
#include "tessera/train/node_train_options.h"

namespace tessera::train {

// The run log of a trainer writing into `out_dir`: the logging trainer
// (rank 0) creates the directory and writes out_dir/metrics.jsonl and
// out_dir/run.json (run::RunLog::describe_run) with `tool` (what ran; "" for the
// program's name), `config` (its options), the graph, the partition config,
// the trainers and the ip_config's hosts; the others' logs are silent.
// `append`: a resumed run keeps the metrics records of the runs before it.
run::RunLog open_run_log(distributed::Context& ctx, const std::string& out_dir, const std::string& tool = "",
                         const nlohmann::json& config = nlohmann::json::object(), bool append = false);

// Where a trainer writes: `given` (--out) when set, else the launcher's run
// directory (TESSERA_RUN_DIR, from `tessera launch --run-dir`), else `fallback`.
std::string out_dir_or_default(const std::string& given, const std::string& fallback);

// The options every node-classification trainer shares, as run.json's config.
nlohmann::json to_json(const NodeTrainOptions& options);

}  // namespace tessera::train
