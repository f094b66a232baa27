// A trainer's checkpoints on its machine's disk: <dir>/trainer-<rank>/epoch-<N>/, one directory per checkpoint
// (N epochs done), holding the files the trainer writes plus MANIFEST.json (each file's size and CRC-32). A
// checkpoint is written under a temporary name and renamed into place once its manifest is complete, so a
// process killed while writing leaves no directory that looks like a checkpoint; a damaged one (a file missing,
// short or changed) is skipped with a warning. The newest `keep` are kept.
//
// Every trainer keeps its own: the dense model and optimizer state are replicated, and a trainer's random
// state is its own. agree_on_checkpoint() picks the newest epoch that every trainer holds intact, so trainers
// killed at different moments of a save still resume together.
//
// Not thread-safe; one Checkpoints per trainer. Errors are tessera::Error naming the directory or file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::distributed {
class Context;
}  // namespace tessera::distributed

namespace tessera::train {

// The checkpoint flags of the built-in trainers.
struct CheckpointOptions {
  int every = 1;       // --checkpoint-every: epochs between checkpoints; 0: none
  std::string dir;     // --checkpoint-dir: "" means <out>/checkpoints
  int keep = 2;        // --keep-checkpoints
  bool resume = false;  // --resume (automatic when the launcher restarts the job: TESSERA_RESTART)
};

// Fails naming the flag when a value is out of range.
void check(const CheckpointOptions& options);
// --resume, or a restart by the launcher.
bool resuming(const CheckpointOptions& options);

class Checkpoints {
 public:
  Checkpoints(const std::string& dir, int rank, int keep);

  // Writes checkpoint `epochs`: `write` puts its files into the directory it
  // is given; the manifest is added and the directory published; then all
  // but the newest `keep` are removed.
  void save(int64_t epochs, const std::function<void(const std::string& dir)>& write) const;
  // Epochs of the intact checkpoints, newest first.
  std::vector<int64_t> intact() const;
  std::string path(int64_t epochs) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int keep_;
};

// Collective: the newest epoch whose checkpoint every trainer holds intact,
// or 0 when there is none (start from the beginning).
int64_t agree_on_checkpoint(distributed::Context& ctx, const Checkpoints& checkpoints);

}  // namespace tessera::train
