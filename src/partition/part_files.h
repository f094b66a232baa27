// The files of one partition (`part<p>/...`), written the same way by the single-machine partitioner and by each
// rank of the distributed one, so that both produce byte-identical output for the same assignment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/io/npy.h"
#include "tessera/partition/partition_config.h"

namespace tessera {

// Paths of partition p's files, relative to the output folder.
PartitionFiles part_files(int part);

// Folder names under part<p>/node_feat and part<p>/edge_feat.
std::string node_data_folder(const PartitionFiles& files, const std::string& ntype);
std::string edge_data_folder(const PartitionFiles& files, const std::string& etype);

// A 1-d .npy of `count` values.
template <typename T>
void write_values(const std::string& path, const T* values, int64_t count) {
  NpyWriter w(path, dtype_of<T>(), {count});
  w.append(values, static_cast<size_t>(count) * sizeof(T));
  w.finish();
}

// An array's schema for the config: dtype and row shape.
ArraySchema schema_of(DType dtype, const std::vector<int64_t>& shape);

}  // namespace tessera
