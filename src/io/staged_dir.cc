#include "io/staged_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tessera/base/error.h"
#include "tessera/base/process.h"

namespace fs = std::filesystem;

namespace tessera {
namespace {

// Removes the staging directories `<final><infix><suffix>` beside final_path
// whose suffix names a run that is gone (dead(suffix)).
template <typename Dead>
void remove_dead_staging(const fs::path& final_path, const std::string& infix, Dead&& dead) {
  const std::string prefix = final_path.filename().string() + infix;
  fs::path parent = final_path.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && dead(name.substr(prefix.size()))) fs::remove_all(entry.path(), ec);
  }
}

// Staging directories of runs that were killed: their pid is gone.
void remove_stale_staging(const fs::path& final_path) {
  remove_dead_staging(final_path, ".tessera-tmp-", [](const std::string& suffix) {
    const pid_t pid = static_cast<pid_t>(std::atol(suffix.c_str()));
    return pid > 0 && !process_alive(pid);
  });
}

// Shared staging directories of earlier distributed runs into the same
// output: a rank killed before the commit leaves its host's copy behind,
// with no process left anywhere to remove it. Two runs cannot write one
// output at once, so any tag but this run's is a dead run's.
void remove_other_shared_staging(const fs::path& final_path, const std::string& tag) {
  remove_dead_staging(final_path, ".tessera-shared-", [&](const std::string& suffix) { return suffix != tag; });
}

std::string trimmed_output_path(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty()) fail("output directory name is empty");
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) fail("{}: cannot create directory: {}", parent.string(), ec.message());
  return path;
}

}  // namespace

StagedDirectory::StagedDirectory(std::string final_path, const std::string& shared_tag)
    : final_path_(trimmed_output_path(std::move(final_path))) {
  staging_path_ = final_path_ + ".tessera-shared-" + shared_tag;
  remove_other_shared_staging(final_path_, shared_tag);
  std::error_code ec;
  fs::create_directories(staging_path_, ec);
  if (ec) fail("{}: cannot create directory: {}", staging_path_, ec.message());
}

StagedDirectory::StagedDirectory(std::string final_path) : final_path_(trimmed_output_path(std::move(final_path))) {
  staging_path_ = final_path_ + ".tessera-tmp-" + std::to_string(::getpid());
  std::error_code ec;
  remove_stale_staging(final_path_);
  fs::remove_all(staging_path_, ec);
  if (!fs::create_directory(staging_path_, ec) || ec)
    fail("{}: cannot create directory: {}", staging_path_, ec ? ec.message() : "already exists");
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_path_, ec);
  }
}

std::string StagedDirectory::subdir(const std::string& relative) const {
  fs::path p = fs::path(staging_path_) / relative;
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec) fail("{}: cannot create directory: {}", p.string(), ec.message());
  return p.string();
}

void StagedDirectory::commit() {
  std::error_code ec;
  if (fs::exists(final_path_, ec)) {
    // Move the old output aside first so the final name is never half-replaced.
    std::string trash = final_path_ + ".tessera-old-" + std::to_string(::getpid());
    fs::rename(final_path_, trash, ec);
    if (ec) fail("{}: cannot replace existing output: {}", final_path_, ec.message());
    fs::rename(staging_path_, final_path_, ec);
    if (ec) fail("{}: cannot rename {} into place: {}", final_path_, staging_path_, ec.message());
    fs::remove_all(trash, ec);
  } else {
    fs::rename(staging_path_, final_path_, ec);
    if (ec) fail("{}: cannot rename {} into place: {}", final_path_, staging_path_, ec.message());
  }
  committed_ = true;
}

void write_text_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const auto reason = [] { return fmt::format("{} ({})", std::strerror(errno), strerrorname_np(errno)); };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create: {}", tmp, reason());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? reason() : "nothing written";
      ::close(fd);
      std::remove(tmp.c_str());
      fail("{}: cannot write {} bytes: {}", path, bytes.size(), why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const std::string why = reason();
    std::remove(tmp.c_str());
    fail("{}: cannot write {} bytes: {}", path, bytes.size(), why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = reason();
    std::remove(tmp.c_str());
    fail("{}: cannot rename from {}: {}", path, tmp, why);
  }
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) {
    if (line.find('\n') != std::string::npos) fail("{}: name '{}' contains a newline", path, line);
    text += line;
    text += '\n';
  }
  write_text_file(path, text);
}

}  // namespace tessera
