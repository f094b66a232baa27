// A trained model on disk: dir/model.pt (torch::save of the module) and dir/config.json (what rebuilds it),
// written into a staging directory and renamed into place, replacing any model already in dir, so a crash never
// leaves a half-written model.
//
// A public header whose API is libtorch's: it includes only the libtorch headers its declarations need (a program
// includes <torch/torch.h> for the rest). save_model_files() only reads the module (no other thread may change it
// meanwhile) and keeps no reference to it. Errors are tessera::Error naming the file (libtorch's own error on one
// line, tessera::describe); a failed save leaves no partial model in dir.
#pragma once

#include <torch/nn/module.h>
#include <torch/serialize/output-archive.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::nn {

void save_model_files(const std::shared_ptr<torch::nn::Module>& module, const nlohmann::json& config,
                      const std::string& dir);

// Writes `archive` (or one tensor, as torch::save) to `path`. Serialised in memory first: libtorch's file writer
// throws from its destructor when the disk fills, which ends the process; here a full disk is a tessera::Error
// naming the file and ENOSPC, and no partial file is left.
void save_archive(torch::serialize::OutputArchive& archive, const std::string& path);
void save_tensor(const torch::Tensor& tensor, const std::string& path);

}  // namespace tessera::nn
