#include "io/json_file.h"

#include <fstream>

#include "tessera/base/error.h"

namespace tessera {

nlohmann::json read_json_file(const std::string& path, const std::string& cannot_open) {
  std::ifstream in(path);
  if (!in) fail("{}", cannot_open);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: invalid JSON: {}", path, e.what());
  }
}

}  // namespace tessera
