#include "test_util.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace tessera::testing {

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "tessera-test-XXXXXX").string();
  path_ = mkdtemp(tmpl.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string shared_data_dir() {
  for (const char* candidate : {"/../shared/data", "/../../shared/data"}) {
    fs::path p = fs::path(TESSERA_SOURCE_DIR + std::string(candidate)).lexically_normal();
    if (fs::is_directory(p)) return p.string();
  }
  return "";
}

CommandResult run_tessera(const std::string& args) {
  TempDir scratch;
  const std::string out = scratch / "stdout", err = scratch / "stderr";
  const std::string cmd = std::string(TESSERA_BINARY) + " " + args + " >" + out + " 2>" + err;
  CommandResult r;
  const int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

int count_entries_with_prefix(const std::string& dir, const std::string& prefix) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace tessera::testing
