#include "tessera/io/dataset_io.h"

#include <filesystem>

#include "formats.h"
#include "io/chunked_format.h"
#include "tessera/base/error.h"

namespace fs = std::filesystem;

namespace tessera {

std::string path_join(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

const std::vector<std::string>& known_formats() {
  static const std::vector<std::string> formats{"tessera", "chunked", "ogb", "ogb-mag", "kg", "openke", "udd", "rdf"};
  return formats;
}

std::string detect_format(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("{}: not a directory (expected a dataset directory)", dir);
  // First: a chunked graph's metadata.json names its files, wherever they lie.
  if (file_exists(path_join(dir, "metadata.json"))) return "chunked";
  if (file_exists(path_join(dir, "meta.json"))) return "tessera";
  if (file_exists(path_join(dir, "raw/num-node-dict.csv.gz"))) return "ogb-mag";
  if (file_exists(path_join(dir, "raw/edge.csv.gz"))) return "ogb";
  if (file_exists(path_join(dir, "entity2id.txt"))) return "openke";
  if (file_exists(path_join(dir, "entities.dict"))) return "udd";
  if (file_exists(path_join(dir, "train.txt"))) return "kg";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string n = entry.path().filename().string();
    if (n.size() > 3 && (n.substr(n.size() - 3) == ".nt" || (n.size() > 6 && n.substr(n.size() - 6) == ".nt.gz")))
      return "rdf";
  }
  fail("{}: cannot tell the dataset format: expected meta.json (tessera), metadata.json (chunked, DGL's chunked "
       "graph), raw/edge.csv.gz (ogb), "
       "raw/num-node-dict.csv.gz (ogb-mag), train.txt (kg), entity2id.txt (openke), entities.dict (udd) "
       "or a *.nt[.gz] file (rdf); use --format to force one",
       dir);
}

Dataset read_dataset(const std::string& dir, const ReadOptions& options) {
  const std::string format = options.format == "auto" || options.format.empty() ? detect_format(dir) : options.format;
  Dataset dataset;
  if (format == "tessera") dataset = read_tessera_dir(dir);
  else if (format == "chunked") dataset = read_chunked_dataset(dir);
  else if (format == "ogb") dataset = read_ogb_node(dir, options);
  else if (format == "ogb-mag") dataset = read_ogb_mag(dir, options);
  else if (format == "kg") dataset = read_kg_names(dir);
  else if (format == "openke") dataset = read_kg_openke(dir);
  else if (format == "udd") dataset = read_kg_udd(dir);
  else if (format == "rdf") dataset = read_rdf(dir);
  else fail("unknown --format '{}' (expected auto, tessera, chunked, ogb, ogb-mag, kg, openke, udd or rdf)", format);
  if (!options.name.empty()) dataset.name = options.name;
  if (dataset.name.empty()) dataset.name = fs::path(dir).lexically_normal().filename().string();
  if (dataset.name.empty()) dataset.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  dataset.validate(dir);
  return dataset;
}

}  // namespace tessera
