// What `tessera report` knows of one run: the files a run folder holds
// (run.json and metrics.jsonl from the trainers, launch.json from the
// launcher) and the partitions behind it (`tessera inspect`), gathered into
// one JSON object for the page to draw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera::run {

// {"name", "dir", "run", "launch", "metrics": [...], "partitions", "notes": [...]}: each file's contents, null
// where the folder lacks it, and a note for each thing the report will not show and why. Throws
// tessera::Error when `dir` is not a folder, holds none of the three files, or a file is not valid JSON (naming
// the file and line).
nlohmann::json load_run(const std::string& dir);

}  // namespace tessera::run
