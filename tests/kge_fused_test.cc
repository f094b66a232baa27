// The fused KGE step (hand-written gradients, no autograd graph) against the
// autograd step on the same batch and the same tables: for every model with
// a fused form, both corruption sides and each loss form, the gradients each
// pushes into the real tables must agree, as must the loss. Batches repeat
// entities on purpose (a head that is also a tail or a negative, a relation
// used twice), so gradients of several occurrences must be summed.
#include <torch/torch.h>

#include <map>

#include <gtest/gtest.h>

#include "kge/kge_step.h"
#include "tessera/base/random.h"

namespace tessera::kge {
namespace {

// A real local table that also keeps what each step pushed.
class RecordingTable : public LocalTable {
 public:
  using LocalTable::LocalTable;
  void push(const std::vector<int64_t>& ids, const torch::Tensor& grad) override {
    ids_ = ids;
    grad_ = grad.clone();
    LocalTable::push(ids, grad);
  }
  // The last push as ID -> gradient row.
  std::map<int64_t, torch::Tensor> pushed() const {
    std::map<int64_t, torch::Tensor> rows;
    for (size_t i = 0; i < ids_.size(); ++i) rows[ids_[i]] = grad_[static_cast<int64_t>(i)];
    return rows;
  }

 private:
  std::vector<int64_t> ids_;
  torch::Tensor grad_;
};

sampling::TripleBatch random_batch(bool corrupt_head, uint64_t seed) {
  Rng rng(seed, 3);
  sampling::TripleBatch b;
  b.num_chunks = 2;
  b.chunk_size = 3;
  b.negatives_per_chunk = 4;
  b.corrupt_head = corrupt_head;
  for (int i = 0; i < 6; ++i) {
    b.head.push_back(static_cast<int64_t>(rng.below(12)));
    b.relation.push_back(static_cast<int64_t>(rng.below(3)));
    b.tail.push_back(static_cast<int64_t>(rng.below(12)));
  }
  b.tail[1] = b.head[1];  // a self-loop
  for (int j = 0; j < 8; ++j) b.negatives.push_back(static_cast<int64_t>(rng.below(12)));
  b.negatives[0] = b.head[0];
  return b;
}

struct StepResult {
  std::map<int64_t, torch::Tensor> entity_grad, relation_grad;
  StepTimes times;
};

StepResult run_step(const ScoreOptions& model, const LossOptions& loss, const Regularization& reg, const sampling::TripleBatch& b,
             KgeStep::Path path) {
  const auto score = make_score_function(model);
  RecordingTable entities("e", 12, score->entity_dim(), uniform_init(0.8, 1), 0.1);
  RecordingTable relations("r", 3, score->relation_dim(), uniform_init(0.8, 2), 0.1);
  KgeStep step(model, *score, loss, reg, path);
  EXPECT_EQ(step.fused(), path == KgeStep::Path::kFastest);
  StepResult run;
  step.run(b, entities, relations, &run.times);
  run.entity_grad = entities.pushed();
  run.relation_grad = relations.pushed();
  return run;
}

void expect_same_rows(const std::map<int64_t, torch::Tensor>& fused, const std::map<int64_t, torch::Tensor>& reference,
                      const std::string& what) {
  ASSERT_EQ(fused.size(), reference.size()) << what;
  float largest = 0;
  for (const auto& [id, g] : reference) largest = std::max(largest, g.abs().max().item<float>());
  ASSERT_GT(largest, 0) << what << ": the reference gradient is all zeros, so the comparison would prove nothing";
  for (const auto& [id, g] : reference) {
    ASSERT_TRUE(fused.count(id)) << what << " row " << id;
    const float diff = (fused.at(id) - g).abs().max().item<float>();
    EXPECT_LE(diff, 2e-4 * largest) << what << " row " << id << "\nfused " << fused.at(id) << "\nautograd " << g;
  }
}

struct LossCase {
  const char* name;
  LossOptions options;
  Regularization reg;
};

std::vector<LossCase> loss_cases() {
  std::vector<LossCase> cases;
  LossOptions adv;
  adv.adversarial = true;
  adv.temperature = 0.7;
  cases.push_back({"logsigmoid -adv -rc (p 3)", adv, {0.01, 3}});
  cases.push_back({"logsigmoid", LossOptions{}, {0, 3}});
  LossOptions hinge;
  hinge.genre = LossGenre::kHinge;
  hinge.margin = 3;
  hinge.adversarial = true;
  cases.push_back({"hinge -adv -rc (p 2)", hinge, {0.02, 2}});
  LossOptions pairwise;
  pairwise.genre = LossGenre::kLogistic;
  pairwise.pairwise = true;
  cases.push_back({"logistic -pw", pairwise, {0.01, 1.5}});
  cases.push_back({"logsigmoid -rc 0.003 -rcr 0.02", LossOptions{}, {0.003, 3, 0.02}});
  LossOptions bce;
  bce.genre = LossGenre::kBCE;
  cases.push_back({"BCE", bce, {0, 3}});
  return cases;
}

TEST(KgeFusedStep, GradientsMatchAutogradForEveryFusedModel) {
  const std::vector<ScoreOptions> models = {{Model::kTransE_l1, 8, 4.0, false, false},
                                            {Model::kTransE_l2, 8, 4.0, false, false},
                                            {Model::kDistMult, 8, 0, false, false},
                                            {Model::kComplEx, 4, 0, true, true},
                                            {Model::kRESCAL, 5, 0, false, false},
                                            {Model::kRotatE, 4, 6.0, true, false}};
  int compared = 0;
  for (const ScoreOptions& model : models)
    for (const bool corrupt_head : {false, true})
      for (const LossCase& c : loss_cases()) {
        const std::string what = model_name(model.model) + (corrupt_head ? ", heads corrupted, " : ", tails corrupted, ") + c.name;
        const sampling::TripleBatch b = random_batch(corrupt_head, 17 + compared);
        const StepResult fused = run_step(model, c.options, c.reg, b, KgeStep::Path::kFastest);
        const StepResult reference = run_step(model, c.options, c.reg, b, KgeStep::Path::kAutograd);
        EXPECT_NEAR(fused.times.loss, reference.times.loss, 1e-4 * std::max(1.0, std::abs(reference.times.loss))) << what;
        EXPECT_NEAR(fused.times.positive, reference.times.positive, 1e-4) << what;
        EXPECT_NEAR(fused.times.negative, reference.times.negative, 1e-4) << what;
        EXPECT_NEAR(fused.times.regularization, reference.times.regularization, 1e-6) << what;
        expect_same_rows(fused.entity_grad, reference.entity_grad, what + ": entity gradients");
        expect_same_rows(fused.relation_grad, reference.relation_grad, what + ": relation gradients");
        ++compared;
      }
  EXPECT_EQ(compared, 6 * 2 * 6);
}

TEST(KgeFusedStep, ModelsWithoutAFusedFormTrainThroughAutograd) {
  for (const Model m : {Model::kTransR, Model::kSimplE}) {
    const ScoreOptions model{m, 4, 4.0, false, false};
    const auto score = make_score_function(model);
    EXPECT_FALSE(KgeStep(model, *score, LossOptions{}, {}).fused()) << model_name(m);
  }
}

TEST(KgeFusedStep, ANonFiniteLossIsAClearError) {
  const ScoreOptions model{Model::kDistMult, 8, 0, false, false};
  const auto score = make_score_function(model);
  LocalTable entities("e", 12, 8, uniform_init(0.8, 1), 0.1);
  LocalTable relations("r", 3, 8, uniform_init(0.8, 2), 0.1);
  relations.write_all(torch::full({3, 8}, std::numeric_limits<float>::infinity()), torch::zeros({3}));
  KgeStep step(model, *score, LossOptions{}, {});
  StepTimes times;
  try {
    step.run(random_batch(false, 5), entities, relations, &times);
    FAIL() << "an infinite relation table trained without an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the loss became"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("24 in the relation rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::kge
