#include "infer_common.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "io/formats.h"
#include "io/staged_dir.h"
#include "io/text.h"
#include "tessera/base/error.h"

namespace tessera::kge {

IdMap read_id_map(const std::string& path) {
  if (!file_exists(path)) fail("{}: no such ID map (expected 'id<TAB>name' lines)", path);
  // Tessera writes tabs; DGL-KE's documentation shows "0,\"Beijing\"".
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  IdMap map;
  map.path = path;
  map.names = read_name_map(path, false, true, first.find('\t') != std::string::npos ? "\t" : ",");
  for (size_t i = 0; i < map.names.size(); ++i) map.ids.emplace(map.names[i], static_cast<int64_t>(i));
  return map;
}

torch::Tensor read_object_list(const std::string& path, int64_t count, const IdMap* names, const char* what) {
  if (!file_exists(path)) fail("--data_files: {} does not exist", path);
  std::vector<int64_t> ids;
  LineReader reader(path);
  std::string_view line;
  while (reader.next(&line)) {
    const std::string_view object = trim(line);
    if (object.empty()) continue;
    if (names != nullptr) {
      auto it = names->ids.find(std::string(object));
      if (it == names->ids.end())
        fail("{}: {} '{}' is not in the ID map {}", reader.where(), what, std::string(object), names->path);
      ids.push_back(it->second);
      continue;
    }
    const int64_t id = parse_int(object, reader.where(), what);
    if (id < 0 || id >= count)
      fail("{}: {} ID {} is not below the count {} (names need --raw_data)", reader.where(), what, id, count);
    ids.push_back(id);
  }
  if (ids.empty()) fail("{}: no {} listed", path, what);
  return torch::tensor(ids, torch::kLong);
}

torch::Tensor every_id(int64_t count) { return torch::arange(count, torch::kLong); }

void check_choice(const std::string& value, const std::vector<std::string>& choices, const char* flag) {
  if (std::find(choices.begin(), choices.end(), value) == choices.end())
    fail("{} '{}': expected one of {}", flag, value, fmt::join(choices, ", "));
}

std::vector<std::string> format_parts(const std::string& format, const std::vector<std::string>& allowed,
                                      size_t data_files) {
  check_choice(format, allowed, "--format");
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t at; (at = format.find('_', from)) != std::string::npos; from = at + 1)
    parts.push_back(format.substr(from, at - from));
  parts.push_back(format.substr(from));
  const size_t given = std::count_if(parts.begin(), parts.end(), [](const std::string& s) { return s != "*"; });
  if (data_files != given)
    fail("--format {} takes {} --data_files (one list per letter), got {}", format, given, data_files);
  return parts;
}

void BestK::offer(const torch::Tensor& keys, const torch::Tensor& scores,
                  const std::function<torch::Tensor(const torch::Tensor&)>& ids_of) {
  const int64_t n = keys.size(0);
  if (n == 0) return;
  // Only a block's own best K can be among the best K of all.
  const torch::Tensor pick = n > k_ ? std::get<1>(keys.topk(k_)) : torch::arange(n, torch::kLong);
  const torch::Tensor k = keys.index_select(0, pick).contiguous();
  const torch::Tensor s = scores.index_select(0, pick).contiguous();
  const torch::Tensor i = ids_of(pick).contiguous();
  const float* kp = k.data_ptr<float>();
  const float* sp = s.data_ptr<float>();
  const int64_t* ip = i.data_ptr<int64_t>();
  for (int64_t r = 0; r < pick.size(0); ++r) {
    Row row{kp[r], sp[r], {0, 0, 0}};
    std::copy(ip + r * width_, ip + (r + 1) * width_, row.ids);
    rows_.push_back(row);
  }
  if (static_cast<int64_t>(rows_.size()) > 8 * k_) compact();
}

void BestK::compact() {
  const auto better = [](const Row& a, const Row& b) { return a.key > b.key; };
  const size_t keep = std::min<size_t>(rows_.size(), static_cast<size_t>(k_));
  std::partial_sort(rows_.begin(), rows_.begin() + keep, rows_.end(), better);
  rows_.resize(keep);
}

std::vector<BestK::Row> BestK::take() {
  compact();
  return std::move(rows_);
}

void write_result(const std::string& path, const std::string& header, const std::vector<BestK::Row>& rows, int width,
                  const std::vector<const IdMap*>& maps) {
  std::string text = header + "\n";
  for (const BestK::Row& row : rows) {
    for (int c = 0; c < width; ++c) {
      const int64_t id = row.ids[c];
      text += maps[c] != nullptr ? maps[c]->names.at(id) : std::to_string(id);
      text += '\t';
    }
    text += fmt::format("{}\n", row.score);
  }
  write_text_file(path, text);
}

}  // namespace tessera::kge
