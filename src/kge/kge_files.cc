#include "kge_files.h"

#include <filesystem>

#include "embedding_table.h"
#include "io/json_file.h"
#include "tessera/io/npy.h"
#include "io/staged_dir.h"
#include "tessera/base/error.h"

namespace tessera::kge {
namespace fs = std::filesystem;

std::string embedding_path(const std::string& save_path, const std::string& dataset, const std::string& model,
                           const char* what) {
  return (fs::path(save_path) / (dataset + "_" + model + "_" + what + ".npy")).string();
}

namespace {

void write_name_map(const std::string& path, const std::vector<std::string>& names, int64_t count) {
  std::string text;
  for (int64_t i = 0; i < count; ++i)
    text += std::to_string(i) + "\t" + (i < static_cast<int64_t>(names.size()) ? names[i] : std::to_string(i)) + "\n";
  write_text_file(path, text);
}

torch::Tensor read_table(const std::string& path) { return tensor_of(read_npy_checked(path, DType::kFloat32, 2, "embedding")); }

bool is_transr(const std::string& model) { return model == "TransR"; }

}  // namespace

nlohmann::json model_config(const KgeOptions& o, const KnowledgeGraph& kg) {
  return {{"model", o.model_name},
          {"dataset", kg.name},
          {"emb_size", o.hidden_dim},
          {"gamma", o.gamma},
          {"double_ent", o.double_ent},
          {"double_rel", o.double_rel},
          {"n_entities", kg.num_entities},
          {"n_relations", kg.num_relations},
          {"max_train_step", o.max_step},
          {"batch_size", o.batch_size},
          {"neg_sample_size", o.neg_sample_size},
          {"lr", o.lr},
          {"neg_adversarial_sampling", o.adversarial},
          {"adversarial_temperature", o.adversarial_temperature},
          {"regularization_coef", o.regularization_coef},
          {"regularization_norm", o.regularization_norm},
          {"regularization_coef_rel", o.regularization_coef_rel},
          {"regularization_weighted", o.regularization_weighted},
          {"loss_genre", o.loss_genre},
          {"train_mode", o.train_mode},
          {"reciprocal", o.reciprocal},
          {"label_smoothing", o.label_smoothing},
          {"optimizer", o.optimizer},
          {"entity_dropout", o.entity_dropout},
          {"relation_dropout", o.relation_dropout}};
}

KgeOptions options_from_config(const std::string& save_path, const KgeOptions& base) {
  const std::string path = (fs::path(save_path) / "config.json").string();
  const nlohmann::json j =
      read_json_file(path, path + ": cannot open (expected the config.json that `tessera kge train` writes)");
  KgeOptions o = base;
  try {
    o.model_name = j.at("model").get<std::string>();
    o.dataset = j.at("dataset").get<std::string>();
    o.hidden_dim = j.at("emb_size").get<int64_t>();
    o.gamma = j.at("gamma").get<double>();
    o.double_ent = j.at("double_ent").get<bool>();
    o.double_rel = j.at("double_rel").get<bool>();
    o.train_mode = j.value("train_mode", std::string("negative_sampling"));  // absent before 1vsAll
    o.reciprocal = j.value("reciprocal", false);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", path, e.what());
  }
  return o;
}

void save_embeddings(const KgeOptions& o, const KnowledgeGraph& kg, const torch::Tensor& entities,
                     const torch::Tensor& relations) {
  fs::create_directories(o.save_path);
  const std::string& model = o.model_name;
  write_npy(embedding_path(o.save_path, kg.name, model, "entity"), array_of(entities));
  if (is_transr(model)) {
    const int64_t d = o.hidden_dim;
    write_npy(embedding_path(o.save_path, kg.name, model, "relation"), array_of(relations.narrow(1, 0, d)));
    write_npy(embedding_path(o.save_path, kg.name, model, "projection"), array_of(relations.narrow(1, d, d * d)));
  } else if (o.reciprocal) {
    // DGL-KE's relation file keeps one row per relation; the inverses apart.
    const int64_t n = kg.num_relations;
    write_npy(embedding_path(o.save_path, kg.name, model, "relation"), array_of(relations.narrow(0, 0, n)));
    write_npy(embedding_path(o.save_path, kg.name, model, "inverse_relation"), array_of(relations.narrow(0, n, n)));
  } else {
    write_npy(embedding_path(o.save_path, kg.name, model, "relation"), array_of(relations));
  }
  write_name_map((fs::path(o.save_path) / "entities.tsv").string(), kg.entity_names, kg.num_entities);
  write_name_map((fs::path(o.save_path) / "relations.tsv").string(), kg.relation_names, kg.num_relations);
  write_text_file((fs::path(o.save_path) / "config.json").string(), model_config(o, kg).dump(2) + "\n");
}

SavedTables load_embeddings(const KgeOptions& o, int64_t entity_dim, int64_t relation_dim) {
  SavedTables t;
  const std::string entity_file = embedding_path(o.save_path, o.dataset, o.model_name, "entity");
  t.entities = read_table(entity_file);
  t.relations = read_table(embedding_path(o.save_path, o.dataset, o.model_name, "relation"));
  if (is_transr(o.model_name))
    t.relations = torch::cat({t.relations, read_table(embedding_path(o.save_path, o.dataset, o.model_name, "projection"))}, 1);
  if (o.reciprocal)
    t.relations = torch::cat(
        {t.relations, read_table(embedding_path(o.save_path, o.dataset, o.model_name, "inverse_relation"))}, 0);
  if (t.entities.size(1) != entity_dim || t.relations.size(1) != relation_dim)
    fail("{}: rows of width {} (entities) and {} (relations) do not fit {} with hidden_dim {} (expected {} and {})",
         o.save_path, t.entities.size(1), t.relations.size(1), o.model_name, o.hidden_dim, entity_dim, relation_dim);
  return t;
}

}  // namespace tessera::kge
