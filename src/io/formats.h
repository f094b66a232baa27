// One reader per input format; read_dataset() picks among them.
#pragma once

#include <string>

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

// Edges from a CSV file of "src,dst" lines (Tessera's CSV edges, OGB's edge.csv.gz).
void read_edge_csv(const std::string& path, EdgeType* edges);

std::string path_join(const std::string& dir, const std::string& name);
bool file_exists(const std::string& path);

}  // namespace tessera
