// Reading a whole JSON file (configs, metadata, checkpoints) with the errors
// every reader wants: which file, and why it could not be read.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

// The parsed file. A missing or unreadable file fails with `cannot_open`
// (say what should have written it); bad JSON fails with
// "<path>: invalid JSON: <where and why>".
nlohmann::json read_json_file(const std::string& path, const std::string& cannot_open);

}  // namespace tessera
