// Scenarios of the multi-process test worker that live in their own files.
#pragma once

#include <map>
#include <string>

// dist_worker sample --data DIR --out DIR [--part-config F] [--samplers N]
int run_sample(const std::map<std::string, std::string>& flags);
