// What the fuzz targets share: a scratch directory for the readers that take a
// path, splitting one input into several files, and the line between an
// expected rejection and a crash.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/base/error.h"

namespace tessera::fuzz {

// A directory of this process's own, under $TESSERA_FUZZ_TMP (scripts/fuzz
// points it into /dev/shm) or else /dev/shm, emptied before each input and
// removed when the process exits normally.
class Scratch {
 public:
  static Scratch& get() {
    static Scratch scratch;
    return scratch;
  }
  // Empties the directory; returns its path.
  const std::string& fresh() {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path_, ec)) std::filesystem::remove_all(entry.path(), ec);
    return path_;
  }
  // Writes `bytes` to `relative` (parent folders made as needed); returns the
  // full path. A name the file system refuses (too long, a folder in the
  // way) leaves no file, as if the input had not named it.
  std::string write(const std::string& relative, std::string_view bytes) {
    const std::filesystem::path p = std::filesystem::path(path_) / relative;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
  const std::string& path() const { return path_; }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

 private:
  Scratch() {
    const char* base = std::getenv("TESSERA_FUZZ_TMP");
    std::string pattern = std::string(base && *base ? base : "/dev/shm") + "/tessera-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror(("tessera fuzz: mkdtemp " + pattern).c_str());
      std::abort();
    }
    path_ = pattern;
  }
  std::string path_;
};

// The whole input as one file `name` in a fresh scratch directory: the
// start of every target whose reader takes a path. Returns the file's path.
inline std::string input_file(const std::string& name, const uint8_t* data, size_t size) {
  Scratch& scratch = Scratch::get();
  scratch.fresh();
  return scratch.write(name, std::string_view(reinterpret_cast<const char*>(data), size));
}


// Several files in one input are separated by this line.
constexpr std::string_view kSeparator = "\n%%\n";

// Splits the input at each separator into at most `max_parts` parts (the last
// part keeps any further separators).
inline std::vector<std::string_view> split(const uint8_t* data, size_t size, size_t max_parts) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t cut = rest.find(kSeparator);
    if (cut == std::string_view::npos) break;
    parts.push_back(rest.substr(0, cut));
    rest.remove_prefix(cut + kSeparator.size());
  }
  parts.push_back(rest);
  return parts;
}

// A directory of files from one input: parts split at the separator, each
// "<relative path>\n<contents>", written into a fresh scratch directory
// (at most `max_files`; a path that is empty, absolute or has ".." is
// skipped, so the reader stays inside). Returns the directory.
inline std::string write_files(const uint8_t* data, size_t size, size_t max_files) {
  Scratch& scratch = Scratch::get();
  const std::string dir = scratch.fresh();
  for (std::string_view part : split(data, size, max_files)) {
    const size_t nl = part.find('\n');
    const std::string path(part.substr(0, nl));
    if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos || path.find('\0') != std::string::npos)
      continue;
    scratch.write(path, nl == std::string_view::npos ? std::string_view() : part.substr(nl + 1));
  }
  return dir;
}

// Runs `body`. Readers reject bad input by throwing tessera::Error with a
// message naming the file and what was expected: that is an expected outcome.
// Other std::exceptions are let through too (they reach the user as one line,
// error.h), unless TESSERA_FUZZ_STRICT=1, which stops on them to find messages
// that do not say which file or field was wrong. Anything else (a sanitizer
// report, an abort, a hang, running out of memory) is a crash.
// TESSERA_FUZZ_VERBOSE=1 prints every outcome (to check what seeds exercise).
template <typename Body>
void expect_rejection_or_success(Body&& body) {
  static const auto flag = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::string_view(v) == "1";
  };
  static const bool strict = flag("TESSERA_FUZZ_STRICT");
  static const bool verbose = flag("TESSERA_FUZZ_VERBOSE");
  try {
    body();
    if (verbose) std::fprintf(stderr, "tessera fuzz: accepted\n");
  } catch (const Error& e) {
    if (verbose) std::fprintf(stderr, "tessera fuzz: rejected: %s\n", e.what());
  } catch (const std::exception& e) {
    if (verbose) std::fprintf(stderr, "tessera fuzz: rejected (not a tessera::Error): %s\n", e.what());
    if (strict) {
      std::fprintf(stderr, "tessera fuzz: not a tessera::Error: %s\n", e.what());
      std::abort();
    }
  }
}

}  // namespace tessera::fuzz
