// Knowledge-graph score functions with DGL-KE's definitions: TransE (L1 /
// L2), DistMult, ComplEx, RotatE, RESCAL, TransR and SimplE. Each scores
// positive triples one by one, and a chunk of positives against a shared set
// of negative entities at once (DGL-KE's chunked negative sampling): as a
// matrix product where the model allows it (DistMult, ComplEx, RESCAL,
// SimplE, TransE_l2 through norms and a product), by broadcasting where it
// does not (TransE_l1, RotatE, TransR).
//
// Everything a relation needs lives in its one embedding row (TransR: the
// translation, then the projection matrix; RESCAL: the matrix), so entity and
// relation tables are plain [count, dim] float tensors a KV store can shard.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::kge {

enum class Model { kTransE_l1, kTransE_l2, kDistMult, kComplEx, kRotatE, kRESCAL, kTransR, kSimplE };

// DGL-KE's model names ("TransE" means TransE_l2); errors list them.
Model parse_model(const std::string& name);
std::string model_name(Model model);
std::vector<std::string> model_names();

struct ScoreOptions {
  Model model = Model::kTransE_l2;
  int64_t hidden_dim = 0;
  double gamma = 12.0;
  bool double_entity = false;    // -de: entity rows twice hidden_dim wide (RotatE, ComplEx)
  bool double_relation = false;  // -dr: relation rows twice hidden_dim wide (ComplEx)
};

class ScoreFunction {
 public:
  virtual ~ScoreFunction() = default;

  int64_t entity_dim() const { return entity_dim_; }
  int64_t relation_dim() const { return relation_dim_; }

  // h, t: [B, entity_dim]; r: [B, relation_dim]. Returns [B].
  virtual torch::Tensor positive(const torch::Tensor& h, const torch::Tensor& r, const torch::Tensor& t) const = 0;

  // Chunks of K positives against N shared negatives each: `anchor` holds
  // the entities kept ([C, K, entity_dim]: the heads when tails are
  // corrupted, the tails when heads are), r the relations [C, K,
  // relation_dim], `negatives` the candidates [C, N, entity_dim]. Returns
  // [C, K, N]: the score of (anchor, r, negative) with the negative in the
  // corrupted slot.
  virtual torch::Tensor negative(const torch::Tensor& anchor, const torch::Tensor& r,
                                 const torch::Tensor& negatives, bool corrupt_head) const = 0;

  // Elements negative() materialises per (positive, negative) pair: 1 where
  // it is a matrix product, about the row width where it broadcasts. Callers
  // size their chunks by it.
  virtual int64_t negative_pair_elements() const { return 1; }

 protected:
  ScoreFunction(int64_t entity_dim, int64_t relation_dim) : entity_dim_(entity_dim), relation_dim_(relation_dim) {}

 private:
  int64_t entity_dim_, relation_dim_;
};

// Errors name the bad option (hidden_dim < 1, a model that needs -de).
std::unique_ptr<ScoreFunction> make_score_function(const ScoreOptions& options);

}  // namespace tessera::kge
