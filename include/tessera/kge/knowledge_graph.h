// A knowledge graph as the KGE trainer sees it: entity and relation counts,
// the training / validation / test triples as (head, relation, tail) rows,
// and the names behind the IDs. Built from any dataset reader's KG form
// (dataset.h's convention), from the forms DGL-KE's command line names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/dataset.h"
#include "tessera/io/array.h"

namespace tessera::kge {

struct KnowledgeGraph {
  std::string name;
  int64_t num_entities = 0, num_relations = 0;
  Array train, valid, test;  // int64 [n, 3]: head, relation, tail
  std::vector<std::string> entity_names, relation_names;  // by ID; may be empty
};

// Where DGL-KE's flags say the data is: --data_path, --dataset and --format
// (built_in, raw_udd_hrt, udd_hrt, openke, or auto to detect).
struct KgSource {
  std::string data_path;
  std::string dataset;
  std::string format = "auto";
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
