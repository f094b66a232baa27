#include "tessera/train/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/staged_dir.h"
#include "tessera/base/error.h"
#include "tessera/distributed/context.h"
#include "tessera/distributed/job_env.h"

namespace tessera::train {
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "MANIFEST.json";
constexpr const char* kPrefix = "epoch-";

// Size and CRC-32 of a file, read in 1 MiB pieces.
std::pair<uint64_t, uint32_t> size_and_crc(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read {}", path);
  std::vector<char> buffer(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t size = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(n));
    size += static_cast<uint64_t>(n);
  }
  return {size, static_cast<uint32_t>(crc)};
}

// Why checkpoint directory `dir` cannot be loaded, or "" when it is intact.
std::string damage(const std::string& dir) {
  nlohmann::json manifest;
  try {
    std::ifstream in(dir + "/" + kManifest);
    if (!in) return "it has no manifest";
    manifest = nlohmann::json::parse(in);
    for (const auto& [name, entry] : manifest.at("files").items()) {
      const std::string file = dir + "/" + name;
      if (!fs::exists(file)) return name + " is missing";
      const auto [size, crc] = size_and_crc(file);
      if (size != entry.at("bytes").get<uint64_t>()) return name + " has the wrong size";
      if (crc != entry.at("crc32").get<uint32_t>()) return name + " fails its checksum";
    }
  } catch (const std::exception& e) {
    return std::string("its manifest is unreadable: ") + e.what();
  }
  return "";
}

// Epochs of the checkpoint directories published in `dir`, newest first:
// "epoch-3", not a staging "epoch-3.tessera-tmp-…".
std::vector<int64_t> published_epochs(const std::string& dir) {
  std::vector<int64_t> epochs;
  if (!fs::is_directory(dir)) return epochs;
  const std::string prefix = kPrefix;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find('.') == std::string::npos)
      epochs.push_back(std::strtoll(name.c_str() + prefix.size(), nullptr, 10));
  }
  std::sort(epochs.rbegin(), epochs.rend());
  return epochs;
}

}  // namespace

void check(const CheckpointOptions& o) {
  if (o.every < 0) fail("--checkpoint-every must be 0 (none) or more epochs (got {})", o.every);
  if (o.keep < 1) fail("--keep-checkpoints must be at least 1 (got {})", o.keep);
}

bool resuming(const CheckpointOptions& o) { return o.resume || distributed::launcher_restart() > 0; }

Checkpoints::Checkpoints(const std::string& dir, int rank, int keep)
    : dir_(fmt::format("{}/trainer-{}", dir, rank)), keep_(keep) {}

std::string Checkpoints::path(int64_t epochs) const { return fmt::format("{}/{}{}", dir_, kPrefix, epochs); }

void Checkpoints::save(int64_t epochs, const std::function<void(const std::string& dir)>& write) const {
  {
    StagedDirectory staged(path(epochs));
    write(staged.path());
    nlohmann::json files = nlohmann::json::object();
    for (const auto& entry : fs::directory_iterator(staged.path())) {
      const auto [size, crc] = size_and_crc(entry.path().string());
      files[entry.path().filename().string()] = {{"bytes", size}, {"crc32", crc}};
    }
    write_text_file(staged.path() + "/" + kManifest, nlohmann::json{{"epochs", epochs}, {"files", files}}.dump(1));
    staged.commit();
  }
  const std::vector<int64_t> all = published_epochs(dir_);
  for (size_t i = static_cast<size_t>(keep_); i < all.size(); ++i) fs::remove_all(path(all[i]));
}

std::vector<int64_t> Checkpoints::intact() const {
  std::vector<int64_t> found;
  for (int64_t epochs : published_epochs(dir_)) {
    const std::string why = damage(path(epochs));
    if (why.empty()) found.push_back(epochs);
    else fmt::print(stderr, "warning: checkpoint {} is damaged ({}); not loading it\n", path(epochs), why);
  }
  return found;
}

int64_t agree_on_checkpoint(distributed::Context& ctx, const Checkpoints& checkpoints) {
  const std::vector<std::vector<int64_t>> all = ctx.collectives().all_gather(checkpoints.intact());
  std::set<int64_t> common(all[0].begin(), all[0].end());
  for (const auto& mine : all) {
    std::set<int64_t> both;
    for (int64_t e : mine)
      if (common.count(e)) both.insert(e);
    common.swap(both);
  }
  return common.empty() ? 0 : *common.rbegin();
}

}  // namespace tessera::train
