// What `tessera kge train` leaves in --save_path, in DGL-KE's names:
// <dataset>_<model>_entity.npy and _relation.npy (rows by original ID;
// TransR's projection matrices separately in _projection.npy; with
// --reciprocal the inverse relations' rows in _inverse_relation.npy), config.json
// (what dglke_eval needs to rebuild the model), and entities.tsv /
// relations.tsv ("id<TAB>name"). Also the checkpoint that --resume reads.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/kge/kge_train.h"
#include "tessera/kge/knowledge_graph.h"

namespace tessera::kge {

std::string embedding_path(const std::string& save_path, const std::string& dataset, const std::string& model,
                           const char* what);  // what: "entity" | "relation" | "projection" | "inverse_relation"

// Writes the tables, config.json and the name maps, each file atomically.
void save_embeddings(const KgeOptions& options, const KnowledgeGraph& kg, const torch::Tensor& entities,
                     const torch::Tensor& relations);

// The model options config.json records, and reading them back.
nlohmann::json model_config(const KgeOptions& options, const KnowledgeGraph& kg);
KgeOptions options_from_config(const std::string& save_path, const KgeOptions& base);

// Tables as saved, the relation rows whole again (TransR: [r | M_r]; with
// --reciprocal the inverses' rows after the relations').
struct SavedTables {
  torch::Tensor entities, relations;
};
SavedTables load_embeddings(const KgeOptions& options, int64_t entity_dim, int64_t relation_dim);

}  // namespace tessera::kge
