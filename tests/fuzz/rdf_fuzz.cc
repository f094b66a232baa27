// The N-Triples reader (io/rdf_format.cc) through read_dataset, as `tessera
// partition` reads DGL's RDF entity-classification datasets (AIFB, MUTAG,
// BGS, AM): an .nt graph of IRIs, blank nodes and literals, plus the
// trainingSet.tsv / testSet.tsv label files naming its entities.
//
// Input: graph.nt, trainingSet.tsv and testSet.tsv in that order, separated
// by "\n%%\n" lines; files beyond those given are absent.
#include "fuzz_util.h"
#include "tessera/io/dataset_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  static const char* const kFiles[] = {"graph.nt", "trainingSet.tsv", "testSet.tsv"};
  auto& scratch = fuzz::Scratch::get();
  const std::string dir = scratch.fresh();
  const auto parts = fuzz::split(data, size, std::size(kFiles));
  for (size_t i = 0; i < parts.size(); ++i) scratch.write(kFiles[i], parts[i]);
  ReadOptions options;
  options.format = "rdf";
  fuzz::expect_rejection_or_success([&] { (void)read_dataset(dir, options); });
  return 0;
}
