#include "tessera/nn/model_files.h"

#include <torch/torch.h>

#include "io/staged_dir.h"
#include "tessera/base/error.h"

namespace tessera::nn {

void save_model_files(const std::shared_ptr<torch::nn::Module>& module, const nlohmann::json& config,
                      const std::string& dir) {
  StagedDirectory staged(dir);
  const std::string model_path = staged.path() + "/model.pt";
  try {
    torch::serialize::OutputArchive archive;
    module->save(archive);
    archive.save_to(model_path);
  } catch (const c10::Error& e) {
    fail("{}: cannot write the model: {}", model_path, describe(e));
  }
  write_text_file(staged.path() + "/config.json", config.dump(2) + "\n");
  staged.commit();
}

}  // namespace tessera::nn
