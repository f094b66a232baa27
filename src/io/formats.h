// One reader per input format; read_dataset() picks among them.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph/dataset.h"
#include "tessera/io/dataset_io.h"

namespace tessera {

Dataset read_tessera_dir(const std::string& dir);
Dataset read_ogb_node(const std::string& dir, const ReadOptions& options);
Dataset read_ogb_mag(const std::string& dir, const ReadOptions& options);
Dataset read_kg_names(const std::string& dir);   // train.txt: head<TAB>rel<TAB>tail names
Dataset read_kg_openke(const std::string& dir);  // entity2id.txt, train2id.txt (h t r)
Dataset read_kg_udd(const std::string& dir);     // entities.dict, relations.dict, id triples (h r t)
Dataset read_rdf(const std::string& dir);        // *.nt[.gz] + trainingSet.tsv / testSet.tsv

// DGL-KE's user-defined KGs as --format raw_udd_<order> / udd_<order> with
// --data_files (relative to `dir`) and --delimiter name them. raw: triples
// of names, IDs given in order of first appearance (train, valid, test);
// else KGE IDs, after the entity and relation maps ("id<SEP>name").
struct KgFiles {
  bool raw = true;
  std::string order = "hrt";  // where the head, relation and tail stand on a line
  std::string delimiter = "\t";
  std::vector<std::string> files;
};
Dataset read_kg_files(const std::string& dir, const KgFiles& spec);

// A name map: "name<SEP>id" (OpenKE, after a count line) or "id<SEP>name"
// (DGL-KE's .dict, Tessera's entities.tsv). The names by ID; IDs must run
// from 0 without gaps, names must be unique (errors name the file and line).
std::vector<std::string> read_name_map(const std::string& path, bool has_count_line, bool id_first,
                                       const std::string& separator);

// Edges from a CSV file of "src,dst" lines (Tessera's CSV edges, OGB's edge.csv.gz).
void read_edge_csv(const std::string& path, EdgeType* edges);

std::string path_join(const std::string& dir, const std::string& name);
bool file_exists(const std::string& path);

}  // namespace tessera
