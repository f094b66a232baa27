#include "tessera/io/checkpoints.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/staged_dir.h"
#include "tessera/base/error.h"

namespace tessera {
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "MANIFEST.json";

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

// TESSERA_FAULT_CHECKPOINT_PAUSE_MS: how long a writer waits, its files
// written, before publishing them, so that tests can kill it mid-checkpoint.
void pause_for_fault_injection() {
  const char* ms = std::getenv("TESSERA_FAULT_CHECKPOINT_PAUSE_MS");
  if (ms != nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(ms)));
}

}  // namespace

std::string checkpoint_damage(const std::string& dir) {
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

std::vector<int64_t> held_by_both(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> x = a, y = b, out;
  std::sort(x.rbegin(), x.rend());
  std::sort(y.rbegin(), y.rend());
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out), std::greater<>());
  return out;
}

Checkpoints::Checkpoints(const std::string& dir, const std::string& owner, int keep, std::string unit)
    : dir_(dir + "/" + owner), keep_(keep), unit_(std::move(unit)) {}

std::string Checkpoints::path(int64_t epochs) const { return fmt::format("{}/{}-{}", dir_, unit_, epochs); }

// The numbers of the checkpoint directories published here, newest first:
// "epoch-3", not a staging "epoch-3.tessera-tmp-…".
std::vector<int64_t> Checkpoints::published_numbers() const {
  std::vector<int64_t> numbers;
  if (!fs::is_directory(dir_)) return numbers;
  const std::string prefix = unit_ + "-";
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find('.') == std::string::npos)
      numbers.push_back(std::strtoll(name.c_str() + prefix.size(), nullptr, 10));
  }
  std::sort(numbers.rbegin(), numbers.rend());
  return numbers;
}

uint64_t Checkpoints::save(int64_t epochs, const std::function<void(const std::string& dir)>& write) const {
  uint64_t bytes = 0;
  {
    StagedDirectory staged(path(epochs));
    write(staged.path());
    nlohmann::json files = nlohmann::json::object();
    for (const auto& entry : fs::directory_iterator(staged.path())) {
      const auto [size, crc] = size_and_crc(entry.path().string());
      files[entry.path().filename().string()] = {{"bytes", size}, {"crc32", crc}};
      bytes += size;
    }
    write_text_file(staged.path() + "/" + kManifest, nlohmann::json{{unit_, epochs}, {"files", files}}.dump(1));
    pause_for_fault_injection();
    staged.commit();
  }
  const std::vector<int64_t> all = published_numbers();
  for (size_t i = static_cast<size_t>(keep_); i < all.size(); ++i) fs::remove_all(path(all[i]));
  return bytes;
}

std::vector<int64_t> Checkpoints::intact() const {
  std::vector<int64_t> found;
  for (int64_t epochs : published_numbers()) {
    const std::string why = checkpoint_damage(path(epochs));
    if (why.empty()) found.push_back(epochs);
    else fmt::print(stderr, "warning: checkpoint {} is damaged ({}); not loading it\n", path(epochs), why);
  }
  return found;
}

}  // namespace tessera
