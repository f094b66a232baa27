// The knowledge-graph triple readers (io/kg_format.cc) through
// read_knowledge_graph(), as `tessera kge` and `tessera partition` reach them:
// triples of names (train.txt ...), OpenKE's id files with count lines,
// DGL-KE's .dict maps with id triples, and DGL-KE's user-defined layouts
// (--format raw_udd_<order> / udd_<order>, --data_files, --delimiter).
// Downloaded or user-made files, any of them malformed.
//
// Input: byte 0 picks the layout, byte 1 the order of h, r and t and byte 2
// the delimiter (user-defined layouts); the rest is the layout's files in
// order, separated by "\n%%\n" lines; files beyond those given are absent.
#include "fuzz_util.h"
#include "tessera/kge/knowledge_graph.h"

namespace {

struct Layout {
  const char* format;  // --format; a user-defined one gets "_<order>"
  std::vector<const char*> files;
};

const Layout kLayouts[] = {
    {"built_in", {"train.txt", "valid.txt", "test.txt"}},
    {"openke", {"entity2id.txt", "relation2id.txt", "train2id.txt", "valid2id.txt", "test2id.txt"}},
    {"auto", {"entities.dict", "relations.dict", "train.txt", "valid.txt", "test.txt"}},  // DGL-KE udd
    {"raw_udd", {"train.tsv", "valid.tsv", "test.tsv"}},
    {"udd", {"entities.tsv", "relations.tsv", "train.tsv", "valid.tsv", "test.tsv"}},
};
const char* const kOrders[] = {"hrt", "htr", "rht", "rth", "thr", "trh", "hrr", "ht"};
const char* const kDelimiters[] = {"\t", "\\t", ",", "|", ";", " ", "\t\t"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  if (size < 3) return 0;
  const Layout& layout = kLayouts[data[0] % std::size(kLayouts)];
  const bool user_defined = std::string_view(layout.format).find("udd") != std::string_view::npos;
  auto& scratch = fuzz::Scratch::get();
  kge::KgSource source;
  source.data_path = scratch.fresh();
  source.format = layout.format;
  if (user_defined) {
    source.format += std::string("_") + kOrders[data[1] % std::size(kOrders)];
    source.delimiter = kDelimiters[data[2] % std::size(kDelimiters)];
  }
  const auto parts = fuzz::split(data + 3, size - 3, layout.files.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    scratch.write(layout.files[i], parts[i]);
    if (user_defined) source.data_files.push_back(layout.files[i]);
  }
  fuzz::expect_rejection_or_success([&] { (void)kge::read_knowledge_graph(source); });
  return 0;
}
