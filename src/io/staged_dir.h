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
  // Staging directory `<final>.tessera-shared-<tag>` that several processes
  // (ranks of a distributed partitioning, on a shared or a local file system)
  // create and fill together; one of them commits, the others call
  // committed_by_another() once it has.
  StagedDirectory(std::string final_path, const std::string& shared_tag);
  // Removes the staging directory unless commit() succeeded.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& path() const { return staging_path_; }
  // Subdirectory of the staging directory, created on demand.
  std::string subdir(const std::string& relative) const;
  // Replaces any existing `final` with the staged directory.
  void commit();
  // Another process renamed this shared staging directory into place: leave it.
  void committed_by_another() { committed_ = true; }

 private:
  std::string final_path_;
  std::string staging_path_;
  bool committed_ = false;
};

// Writes `bytes` (text or binary) to `path` through a temporary name and a
// rename. A failed write (a full disk) removes the temporary and is an error
// naming the file and errno's reason and name ("No space left on device
// (ENOSPC)").
void write_text_file(const std::string& path, const std::string& bytes);

// Writes one name per line (node or relation names); a name containing a
// newline is an error, since it could not be read back.
void write_lines(const std::string& path, const std::vector<std::string>& lines);

}  // namespace tessera
