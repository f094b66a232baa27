#include "kge_checkpoint.h"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "embedding_table.h"
#include "io/json_file.h"
#include "io/staged_dir.h"
#include "tessera/base/error.h"
#include "tessera/distributed/dist_checkpoint.h"
#include "tessera/io/npy.h"

namespace tessera::kge {
namespace {

torch::Tensor read_rows(const std::string& path) { return tensor_of(read_npy_checked(path, DType::kFloat32, 2, "embedding")); }
torch::Tensor read_sums(const std::string& path) {
  return tensor_of(read_npy_checked(path, DType::kFloat32, 1, "Adagrad sums"));
}

}  // namespace

KgeCheckpoints::KgeCheckpoints(KgeJob& job, const std::string& dir, int keep, nlohmann::json config)
    : job_(&job),
      dir_(std::filesystem::absolute(dir).lexically_normal().string()),
      keep_(keep),
      config_(std::move(config)),
      trainer_(dir_, "trainer-0", keep, "step") {}

int64_t KgeCheckpoints::newest(bool required) {
  std::vector<int64_t> found;
  if (job_->logs()) {
    found = trainer_.intact();
    const std::vector<std::string> on_servers = job_->entities->server_tensors();
    if (!on_servers.empty())
      found = held_by_both(found, distributed::intact_server_checkpoints(*job_->ctx, dir_, "step"));
  }
  std::vector<int64_t> newest{found.empty() ? 0 : found.front()};
  if (job_->distributed()) newest = job_->ctx->collectives().all_gather(newest)[0];
  if (required && newest[0] == 0)
    fail("--resume: no checkpoint in {} (none written whole yet; training writes one every --checkpoint_interval steps)",
         dir_);
  return newest[0];
}

void KgeCheckpoints::load(int64_t step) {
  if (job_->logs()) {
    const std::string dir = trainer_.path(step);
    const nlohmann::json progress = read_json_file(dir + "/progress.json", dir + " has no progress.json");
    for (const char* key : {"model", "emb_size", "n_entities", "n_relations", "double_ent", "double_rel"})
      if (progress.value(key, nlohmann::json()) != config_.at(key))
        fail("--resume: the checkpoint in {} has {} = {}, this run {}", dir, key,
             progress.value(key, nlohmann::json()).dump(), config_.at(key).dump());
    job_->relations->write_all(read_rows(dir + "/relation.npy"), read_sums(dir + "/relation_state.npy"));
    const std::vector<std::string> on_servers = job_->entities->server_tensors();
    if (on_servers.empty())
      job_->entities->write_all(read_rows(dir + "/entity.npy"), read_sums(dir + "/entity_state.npy"));
    else
      distributed::load_server_checkpoint(*job_->ctx, dir_, step, on_servers, "step");
  }
  job_->barrier();
  job_->broadcast_relations();  // only trainer 0 read the checkpoint
}

void KgeCheckpoints::save(int64_t step) {
  job_->barrier();  // every trainer's pushes have landed; none of the next step's yet
  if (job_->logs()) {
    const std::vector<std::string> on_servers = job_->entities->server_tensors();
    if (!on_servers.empty()) distributed::save_server_checkpoint(*job_->ctx, dir_, step, on_servers, keep_, "step");
    trainer_.save(step, [&](const std::string& dir) {
      write_npy(dir + "/relation.npy", array_of(job_->relations->read_all()));
      write_npy(dir + "/relation_state.npy", array_of(job_->relations->read_state().reshape({-1})));
      if (on_servers.empty()) {
        write_npy(dir + "/entity.npy", array_of(job_->entities->read_all()));
        write_npy(dir + "/entity_state.npy", array_of(job_->entities->read_state().reshape({-1})));
      }
      nlohmann::json progress = config_;
      progress["step"] = step;
      write_text_file(dir + "/progress.json", progress.dump(2) + "\n");
    });
  }
  job_->barrier();
}

}  // namespace tessera::kge
