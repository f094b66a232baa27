// Reading datasets in the formats users have, and writing the two layouts
// Tessera produces (its own dataset directory, and OGB's raw layout).
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/dataset.h"

namespace tessera {

struct ReadOptions {
  // auto | tessera | ogb | ogb-mag | kg | openke | udd | rdf
  std::string format = "auto";
  // OGB: which split/<kind> to use when there are several.
  std::string split;
  // Dataset name; defaults to the directory's base name.
  std::string name;
};

// Reads `dir`, detecting the format from the files present unless forced.
// The result has been validated (Dataset::validate).
Dataset read_dataset(const std::string& dir, const ReadOptions& options = {});

// The format `dir` is in, or an error listing what was looked for.
std::string detect_format(const std::string& dir);
const std::vector<std::string>& known_formats();

// Writes a Tessera dataset directory (meta.json + .npy) atomically.
void write_tessera_dataset(const Dataset& dataset, const std::string& dir);

// Writes OGB's raw layout atomically: the homogeneous node-property layout
// for one node type and one edge type, ogbn-mag's layout otherwise.
void write_ogb_dataset(const Dataset& dataset, const std::string& dir, const std::string& split_kind);

}  // namespace tessera
