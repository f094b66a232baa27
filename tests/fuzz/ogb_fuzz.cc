// The OGB CSV readers (io/ogb_format.cc) through read_dataset, as `tessera
// partition` reads a downloaded OGB directory: counts, edge lists, features,
// labels, years and splits as CSV (gzip or plain), in the homogeneous layout
// (ogbn-arxiv, ogbn-products) or the heterogeneous one (ogbn-mag).
//
// Input: byte 0 picks the format (ogb or ogb-mag); the rest is a list of
// files separated by "\n%%\n" lines, each "<relative path>\n<contents>" (the
// seeds name the layout's files; paths with ".." or a leading '/' are skipped).
#include "fuzz_util.h"
#include "tessera/io/dataset_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  if (size < 1) return 0;
  const std::string dir = fuzz::write_files(data + 1, size - 1, 64);
  ReadOptions options;
  options.format = data[0] % 2 ? "ogb-mag" : "ogb";
  fuzz::expect_rejection_or_success([&] { (void)read_dataset(dir, options); });
  return 0;
}
