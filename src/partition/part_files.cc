#include "partition/part_files.h"

namespace tessera {

PartitionFiles part_files(int part) {
  const std::string dir = "part" + std::to_string(part);
  return {dir + "/node_feat", dir + "/edge_feat", dir + "/graph", dir + "/orig_nids.npy", dir + "/orig_eids.npy"};
}

std::string node_data_folder(const PartitionFiles& files, const std::string& ntype) {
  return files.node_feats + "/" + ntype;
}

std::string edge_data_folder(const PartitionFiles& files, const std::string& etype) {
  return files.edge_feats + "/" + etype;
}

ArraySchema schema_of(DType dtype, const std::vector<int64_t>& shape) {
  return ArraySchema{dtype, std::vector<int64_t>(shape.begin() + 1, shape.end())};
}

}  // namespace tessera
