// Scenarios of the multi-process test worker that live in their own files.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "tessera/distributed/context.h"

// Joins the job, or runs standalone on --part-config when it is given.
inline std::unique_ptr<tessera::distributed::Context> initialize_from_flags(const std::map<std::string, std::string>& flags) {
  tessera::distributed::InitOptions init;
  if (flags.count("--part-config")) {
    init.standalone = true;
    init.part_config = flags.at("--part-config");
  }
  return tessera::distributed::initialize(init);
}

// dist_worker sample --data DIR --out DIR [--part-config F] [--samplers N]
int run_sample(const std::map<std::string, std::string>& flags);

// dist_worker hetero-sample --data DIR (a heterogeneous dataset partitioned
// with --add-reverse) [--part-config F]
int run_hetero_sample(const std::map<std::string, std::string>& flags);
