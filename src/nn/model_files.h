// A trained model on disk: dir/model.pt (torch::save of the module) and
// dir/config.json (what rebuilds it), written into a staging directory and
// renamed into place, so a crash never leaves a half-written model.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::nn {

void save_model_files(const std::shared_ptr<torch::nn::Module>& module, const nlohmann::json& config,
                      const std::string& dir);

// The first line of a libtorch error (the rest is a C++ stack trace).
std::string first_line(const std::string& text);

}  // namespace tessera::nn
