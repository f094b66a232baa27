// A directory written under a temporary name beside its final path and renamed
// into place only when complete, so that a failed or killed run never leaves
// a half-written output that looks valid.
#pragma once

#include <string>
#include <vector>

namespace tessera {

class StagedDirectory {
 public:
  // Creates `<final>.tessera-tmp-<pid>` (and missing parents of `final`).
  explicit StagedDirectory(std::string final_path);
  // Removes the staging directory unless commit() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& path() const { return staging_path_; }
  // Subdirectory of the staging directory, created on demand.
  std::string subdir(const std::string& relative) const;
  // Replaces any existing `final` with the staged directory.
  void commit();

 private:
  std::string final_path_;
  std::string staging_path_;
  bool committed_ = false;
};

// Writes `text` to `path` through a temporary name and a rename.
void write_text_file(const std::string& path, const std::string& text);

// Writes one name per line (node or relation names); a name containing a
// newline is an error, since it could not be read back.
void write_lines(const std::string& path, const std::vector<std::string>& lines);

}  // namespace tessera
