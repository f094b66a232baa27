// `tessera kge predict` and `tessera kge emb_sim`: DGL-KE's dglke_predict and dglke_emb_sim on the embeddings
// that `tessera kge train` saves.
//
// predict scores (head, relation, tail) triples built from lists of heads, relations and tails ('*' in --format
// stands for every entity or relation) with the trained model, and keeps the top K: over all combinations
// (exec_mode all), per given triple (triplet_wise), or per head, relation or tail (batch_head / batch_rel /
// batch_tail). Scores are DGL-KE's: the model's score with gamma 0 for score_func none, and log(sigmoid(score))
// with the trained gamma for logsigmoid.
//
// emb_sim ranks pairs of rows of one embedding file by cosine, l2, l1, dot or ext_jaccard similarity (l1 and l2
// are distances: smallest first), over all pairs (all), given pairs (pairwise) or per left object (batch_left).
//
// Both read lists with one object per line: KGE IDs, or with --raw_data names looked up in an "id<TAB>name" map
// (the entities.tsv / relations.tsv training writes, or DGL-KE's .dict files). They write a TSV with a header
// (head rel tail score / left right score) to --output, atomically, and return 0; errors are tessera::Error
// naming the flag, or the file and line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::kge {

struct PredictOptions {
  std::string data_path = "data";     // where --entity_mfile / --rel_mfile are looked up
  std::string model_path = "ckpts";   // --save_path of training: config.json and the .npy tables
  std::string format;                 // h_r_t, h_r_*, h_*_t, *_r_t, h_*_*, *_r_*, *_*_t
  std::vector<std::string> data_files;  // one per letter of --format that is not '*'
  bool raw_data = false;
  std::string exec_mode = "all";      // all | triplet_wise | batch_head | batch_rel | batch_tail
  int64_t topk = 10;
  std::string score_func = "none";    // none | logsigmoid
  std::string output = "result.tsv";
  std::string entity_mfile, rel_mfile;  // default: the model folder's entities.tsv / relations.tsv
  int num_thread = 0;                 // 0: every core
};

struct EmbSimOptions {
  std::string emb_file;               // an entity or relation table (.npy, float32 [n, d])
  std::string format;                 // l_r, l_*, *_r or *
  std::vector<std::string> data_files;
  bool raw_data = false;
  std::string mfile;                  // with --raw_data: the "id<TAB>name" map of the table's rows
  std::string exec_mode = "all";      // all | pairwise | batch_left
  int64_t topk = 10;
  std::string sim_func = "cosine";    // cosine | l2 | l1 | dot | ext_jaccard
  std::string output = "result.tsv";
  int num_thread = 0;
};

int run_kge_predict(const PredictOptions& options);
int run_kge_emb_sim(const EmbSimOptions& options);

}  // namespace tessera::kge
