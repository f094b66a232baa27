// Reading datasets in the formats users have, and writing the two layouts Tessera produces (its own dataset
// directory, and OGB's raw layout).
//
// read_dataset() returns a validated Dataset the caller owns; its arrays may map the directory's .npy files
// read-only, so those files must not be changed in place while it lives (Tessera's own writers replace files
// by rename, which is safe). Writers stage the whole directory under a temporary name and rename it into place
// only when complete, replacing any existing one; a failed write leaves no partial output. The functions keep
// no state and may run on several threads for different directories. Errors are tessera::Error naming the
// directory, file and line or field: an unknown or undetectable format, a malformed file, a failed write.
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
