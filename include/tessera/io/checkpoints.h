// One process's checkpoints on its machine's disk: <dir>/<owner>/<unit>-<N>/, one directory per checkpoint (N
// epochs, or steps, done), holding the files the owner writes plus MANIFEST.json (each file's size and CRC-32).
// A checkpoint is written under a temporary name and renamed into place once its manifest is complete, so a
// process killed while writing leaves no directory that looks like a checkpoint; a damaged one (a file missing,
// short or changed) is skipped with a warning. The newest `keep` are kept.
//
// Owners are "trainer-<rank>" (dense model, optimizer and random state: every trainer keeps its own) and
// "server-<machine>" (the machine's rows of the job's learnable tensors, written by its main server), so the
// processes of a job write their shares in parallel and a reader checks each share on its own.
//
// Not thread-safe; one Checkpoints per owner. Errors are tessera::Error naming the directory or file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera {

class Checkpoints {
 public:
  // `unit`: what N counts, "epoch" (node classification) or "step" (KGE).
  Checkpoints(const std::string& dir, const std::string& owner, int keep, std::string unit = "epoch");

  // Writes checkpoint `epochs`: `write` puts its files into the directory it
  // is given; the manifest is added and the directory published; then all
  // but the newest `keep` are removed. Returns the bytes written.
  uint64_t save(int64_t epochs, const std::function<void(const std::string& dir)>& write) const;
  // Epochs of the intact checkpoints, newest first.
  std::vector<int64_t> intact() const;
  std::string path(int64_t epochs) const;
  const std::string& dir() const { return dir_; }

 private:
  std::vector<int64_t> published_numbers() const;

  std::string dir_;
  int keep_;
  std::string unit_;
};

// The numbers in both lists, newest first: what two shares of a job both
// hold intact.
std::vector<int64_t> held_by_both(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Why checkpoint directory `dir` cannot be loaded, or "" when its manifest
// lists files that are all there, of their sizes and checksums.
std::string checkpoint_damage(const std::string& dir);

}  // namespace tessera
