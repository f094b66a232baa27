// What `kge predict` and `kge emb_sim` share: object lists (IDs, or names
// through an ID map), the best-K collector, and the result file.
//
// Private header: it includes libtorch, which stays out of include/.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::kge {

// Scores materialised at once by predict and emb_sim: bounds memory for the
// broadcasting models, and keeps a block in cache between scoring and the
// top-K pass over it (1 << 24 ran 24x slower on a full emb_sim).
constexpr int64_t kInferBlockElements = int64_t{1} << 20;

// An "id<TAB>name" (or "id,name") map, both ways.
struct IdMap {
  std::string path;
  std::vector<std::string> names;
  std::unordered_map<std::string, int64_t> ids;
};
IdMap read_id_map(const std::string& path);

// The objects of a list file, one per line: IDs below `count`, or names in
// `names` when it is given. Errors name the file, line and flag.
torch::Tensor read_object_list(const std::string& path, int64_t count, const IdMap* names, const char* what);

// 0..count-1: what '*' stands for.
torch::Tensor every_id(int64_t count);

// Fails naming `flag` and the choices unless `value` is one of them.
void check_choice(const std::string& value, const std::vector<std::string>& choices, const char* flag);

// The parts of --format ("h_r_*" -> {"h", "r", "*"}), checked against the
// allowed forms and against the count of --data_files (one per part not '*').
std::vector<std::string> format_parts(const std::string& format, const std::vector<std::string>& allowed,
                                      size_t data_files);

// Keeps the K best-scoring rows of everything offered. A row is the IDs of
// its objects (2 or 3) and its score; `key` orders (higher first), which lets
// distances (smaller is better) be offered as their negation.
class BestK {
 public:
  BestK(int64_t k, int width) : k_(k), width_(width) {}
  // keys and scores [n]; ids_of(positions) gives the IDs [m, width] of the
  // rows at those positions, asked only for the few that can be kept.
  void offer(const torch::Tensor& keys, const torch::Tensor& scores,
             const std::function<torch::Tensor(const torch::Tensor&)>& ids_of);
  // The rows kept, best first.
  struct Row {
    float key, score;
    int64_t ids[3];
  };
  std::vector<Row> take();

 private:
  void compact();
  int64_t k_;
  int width_;
  std::vector<Row> rows_;
};

// Writes the rows as TSV with `header` ("head\trel\ttail\tscore"), names for
// the ID columns where `maps[c]` is given; atomically.
void write_result(const std::string& path, const std::string& header, const std::vector<BestK::Row>& rows, int width,
                  const std::vector<const IdMap*>& maps);

}  // namespace tessera::kge
