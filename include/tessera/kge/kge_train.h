// `tessera kge train` / `tessera kge eval`: DGL-KE's dglke_train, dglke_dist_train and dglke_eval as one native
// program. Standalone, it reads the dataset and trains --num_proc worker threads Hogwild-style on shared tables.
// Under `tessera launch` (or with --part_config), the entity table is a DistEmbedding the servers hold and
// update with row-wise Adagrad; each trainer samples the triples stored with its machine's partition, so most
// rows it touches are local; relation rows are replicated per trainer and merged every --force_sync_interval
// steps (a server process never returns from run_kge_training: it serves and exits).
//
// The run functions own everything they create and hold nothing afterwards; they set the process's thread
// counts and malloc thresholds, so call one at a time from the main thread. Distributed training is
// collective: every trainer of the job runs it with the same options. They return 0 on success and throw
// tessera::Error otherwise (an error in a worker thread is rethrown on the calling thread): validate() names
// the flag and value at fault, and reading data or saved embeddings names the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::kge {

struct KgeOptions {
  // Data: DGL-KE's flags (standalone), or a partitioned KG (distributed).
  std::string dataset;  // default: the data folder's name
  std::string data_path = "data";
  std::string format = "auto";  // built_in | raw_udd_<order> | udd_<order> | openke | auto
  std::vector<std::string> data_files;  // user-defined formats: the files, relative to the data folder
  std::string delimiter = "\t";         // user-defined formats: the field separator
  std::string part_config;      // distributed: <out>/<graph>.json of `tessera kge partition`
  // Model.
  std::string model_name = "TransE_l2";
  int64_t hidden_dim = 400;
  double gamma = 12.0;
  bool double_ent = false, double_rel = false;
  // Training.
  double lr = 0.01;
  int64_t batch_size = 1024;
  int64_t neg_sample_size = 256;
  int64_t neg_chunk_size = -1;
  bool neg_deg_sample = false;
  std::string loss_genre = "Logsigmoid";
  double margin = 1.0;  // -m (Hinge)
  bool adversarial = false;
  double adversarial_temperature = 1.0;
  bool pairwise = false;
  double regularization_coef = 0.000002;
  double regularization_norm = 3;
  // Beyond DGL-KE: the relation rows' own penalty weight (-rcr); below 0,
  // --regularization_coef's, as DGL-KE weighs both tables alike.
  double regularization_coef_rel = -1;
  // 1vsAll / KvsAll: each row's penalty weighted by its share of the batch's
  // uses (LibKGE's weighted Lp), instead of each distinct entity once.
  bool regularization_weighted = false;
  // Beyond DGL-KE: "negative_sampling" (its training, the default),
  // "1vsAll" (both ends of every positive scored against every entity,
  // softmax cross-entropy over them, as LibKGE's 1vsAll) or "KvsAll" (each
  // distinct (head, relation) and (relation, tail) against every entity, its
  // known answers the target, as LibKGE's KvsAll).
  std::string train_mode = "negative_sampling";
  // Beyond DGL-KE: "row_adagrad" (its row-wise Adagrad, the default) or
  // "adagrad" (torch's element-wise Adagrad, LibKGE's; standalone).
  std::string optimizer = "row_adagrad";
  // KvsAll: LibKGE's (ConvE's) label smoothing of the multi-label targets.
  double label_smoothing = 0;
  // Each relation r gets an inverse r' whose own row predicts heads as tails
  // of (t, r', ?), in training and evaluation (LibKGE's reciprocal model).
  bool reciprocal = false;
  // 1vsAll / KvsAll: dropout on the embeddings a step reads (LibKGE's embedder
  // dropout): the queries' anchor rows and the candidate table, and the
  // queries' relation rows; training only.
  double entity_dropout = 0, relation_dropout = 0;
  // 1vsAll / KvsAll: the most memory its scores and dense entity gradient may take.
  int64_t all_scores_mb = 2048;
  int64_t max_step = 80000;  // per worker, as in DGL-KE
  int64_t log_interval = 1000;
  int num_proc = 1, num_thread = 0;  // num_thread 0: cores / num_proc
  int num_test_proc = 0;             // evaluation runs on num_test_proc x threads per worker (0: num_proc)
  bool async_update = false;
  int64_t force_sync_interval = 0;  // 0: 10 with negative sampling, 1 with 1vsAll / KvsAll
  uint64_t seed = 0;
  // Evaluation.
  bool valid = false, test = false;
  int64_t eval_interval = 10000;
  int64_t batch_size_eval = 8;
  int64_t neg_sample_size_eval = -1;
  bool neg_deg_sample_eval = false;  // as many candidates again, by degree (needs --no_eval_filter)
  double eval_percent = 1.0;
  bool no_eval_filter = false;
  // Output.
  std::string save_path = "ckpts";
  bool no_save_emb = false;
  int64_t checkpoint_interval = 10000;  // steps; 0: none
  std::string checkpoint_dir;           // "": <save_path>/checkpoint
  int keep_checkpoints = 2;
  bool resume = false;
};

// Throws naming the flag for a value DGL-KE would reject (and a few more).
void validate(const KgeOptions& options);

// Runs training (and the evaluations asked for); returns the exit code.
int run_kge_training(const KgeOptions& options);

// Evaluates embeddings saved by training in --save_path on the test triples
// (dglke_eval); prints the metrics and the final JSON line.
int run_kge_evaluation(const KgeOptions& options);

}  // namespace tessera::kge
