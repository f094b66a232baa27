// kge train's checkpoints, in <save_path>/checkpoint/ (or --checkpoint_dir): every
// --checkpoint_interval steps, trainer 0 writes the relation table, its Adagrad sums and the step reached
// (trainer-0/step-<N>/), and the entity rows with their Adagrad sums are written where they live: by each
// machine's main server, its partition's rows (server-<m>/step-<N>/), or in standalone training by the one
// process (as trainer-0's entity.npy). Each share has its own manifest (tessera/io/checkpoints.h); a run
// resumes from the newest step that every share holds intact, so a process killed while writing one costs
// one interval, not the run.
//
// Private header: it includes libtorch through the job.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kge_job.h"
#include "tessera/io/checkpoints.h"

namespace tessera::kge {

class KgeCheckpoints {
 public:
  // `config`: model_config(), recorded with each checkpoint and compared on resume.
  KgeCheckpoints(KgeJob& job, const std::string& dir, int keep, nlohmann::json config);

  // Collective: the newest step every share holds intact, or 0; `required`
  // (--resume) makes none an error naming the directory.
  int64_t newest(bool required);
  // Collective: loads checkpoint `step` into the tables and gives every trainer trainer 0's relations.
  void load(int64_t step);
  // Collective, every trainer's pushes flushed: writes checkpoint `step`.
  void save(int64_t step);

  const std::string& dir() const { return dir_; }

 private:
  KgeJob* job_;
  std::string dir_;  // absolute: the servers write relative to it too
  int keep_;
  nlohmann::json config_;
  Checkpoints trainer_;
};

}  // namespace tessera::kge
