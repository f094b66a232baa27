#include "tessera/nn/model_files.h"

#include <torch/torch.h>

#include <sstream>

#include "io/staged_dir.h"
#include "tessera/base/error.h"

namespace tessera::nn {

void save_model_files(const std::shared_ptr<torch::nn::Module>& module, const nlohmann::json& config,
                      const std::string& dir) {
  StagedDirectory staged(dir);
  const std::string model_path = staged.path() + "/model.pt";
  torch::serialize::OutputArchive archive;
  module->save(archive);
  save_archive(archive, model_path);
  write_text_file(staged.path() + "/config.json", config.dump(2) + "\n");
  staged.commit();
}

void save_archive(torch::serialize::OutputArchive& archive, const std::string& path) {
  std::ostringstream bytes;
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    fail("{}: cannot serialise: {}", path, describe(e));
  }
  write_text_file(path, std::move(bytes).str());
}

void save_tensor(const torch::Tensor& tensor, const std::string& path) {
  std::ostringstream bytes;
  try {
    torch::save(tensor, bytes);
  } catch (const c10::Error& e) {
    fail("{}: cannot serialise: {}", path, describe(e));
  }
  write_text_file(path, std::move(bytes).str());
}

}  // namespace tessera::nn
