// DGL's chunked graph format (io/chunked_format.cc, io/chunked_dataset.cc)
// through read_dataset, as `tessera partition` reads a chunked graph a user
// was handed: metadata.json (node and edge types, chunk counts, the files of
// each array), edge chunks as CSV or .npy, node and edge data as .npy.
//
// Input: a list of files separated by "\n%%\n" lines, each
// "<relative path>\n<contents>" (the seeds write metadata.json and its
// chunks). metadata.json may name absolute paths, which the reader follows as
// DGL's does; an input whose metadata names one (or "..") is skipped, so the
// reader stays in the scratch directory rather than reading /dev/zero.
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_util.h"
#include "tessera/io/dataset_io.h"

namespace {

bool leaves_the_directory(const std::string& metadata) {
  for (const char* escape : {"\"/", "\"\\/", "\\u", ".."})
    if (metadata.find(escape) != std::string::npos) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string dir = fuzz::write_files(data, size, 32);
  std::string metadata;
  if (std::filesystem::is_regular_file(dir + "/metadata.json")) {
    std::ifstream in(dir + "/metadata.json", std::ios::binary);
    metadata.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (leaves_the_directory(metadata)) return 0;
  ReadOptions options;
  options.format = "chunked";
  fuzz::expect_rejection_or_success([&] { (void)read_dataset(dir, options); });
  return 0;
}
