// A knowledge graph as the KGE trainer sees it: entity and relation counts, the training / validation / test
// triples as (head, relation, tail) rows, and the names behind the IDs. Built from any dataset reader's KG form
// (dataset.h's convention), or from the forms DGL-KE's command line names.
//
// A KnowledgeGraph is a plain value: train is a new array; valid and test share memory with the Dataset's
// arrays (possibly a read-only file mapping). triple() points into an Array, valid while it lives. No state is kept
// between calls and no locks are taken: several threads may read one KnowledgeGraph. Errors are tessera::Error
// naming the flag, file and line (no --data_path, an unknown --format, a malformed triple, an ID not below the
// count, duplicate names), or what a dataset lacks to be a knowledge graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/dataset.h"
#include "tessera/base/array.h"

namespace tessera::kge {

struct KnowledgeGraph {
  std::string name;
  int64_t num_entities = 0, num_relations = 0;
  Array train, valid, test;  // int64 [n, 3]: head, relation, tail
  std::vector<std::string> entity_names, relation_names;  // by ID; may be empty
};

// Where DGL-KE's flags say the data is: --data_path, --dataset and --format
// (built_in, raw_udd_<order>, udd_<order>, openke, or auto to detect), and
// for the user-defined formats --data_files (relative to the data folder:
// raw_udd takes train [valid test], udd entities relations train [valid
// test]) and --delimiter (one character, tab by default).
struct KgSource {
  std::string data_path;
  std::string dataset;
  std::string format = "auto";
  std::vector<std::string> data_files;
  std::string delimiter = "\t";
};

// The directory read: <data_path>/<dataset> when that exists, else data_path.
std::string kg_directory(const KgSource& source);

// The dataset behind `source`, in the KG convention (for the partitioner).
Dataset read_kg_dataset(const KgSource& source);

// Reads the triples; errors name the file and line (malformed triple, ID not
// below the count, duplicate names) or the unknown format.
KnowledgeGraph read_knowledge_graph(const KgSource& source);

// The KG of a dataset in the KG convention; fails naming what is missing.
KnowledgeGraph knowledge_graph_of(const Dataset& dataset);

// Triples of an [n, 3] array as three columns' pointer access.
inline const int64_t* triple(const Array& triples, int64_t i) { return triples.data<int64_t>() + 3 * i; }

}  // namespace tessera::kge
