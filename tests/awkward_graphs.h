// Small graphs with the shapes that break trainers written for the common
// case, for the configuration sweep (config_sweep_test.cc). Each is a few
// hundred nodes, deterministic, and written in a format `tessera partition`
// or `tessera kge` reads.
#pragma once

#include <string>
#include <vector>

namespace tessera::testing {

struct AwkwardGraph {
  std::string name;         // also the dataset directory's name
  std::string description;  // what is awkward about it, for failure messages
};

// Heterogeneous, for `train rgcn`, written as N-Triples + trainingSet.tsv /
// testSet.tsv (read with --format rdf):
//  - "molecules": the labelled type (Compound) is only ever a subject, as in
//    MUTAG; a relation with a single edge; a type that is only a destination;
//    compounds with no triple but their label; no feature on any type.
//  - "sparse-hetero": as above plus a node type with one node (absent from
//    one partition of two) and a training split of two nodes of one class
//    (a partition owns no training node, the training labels one class).
std::vector<AwkwardGraph> hetero_graphs();

// Homogeneous, for `train sage` (Tessera's dataset layout, with "feat"):
//  - "isolated": half the nodes have no edge at all, one training node;
//  - "one-class": every training node of one class, self-loops and
//    duplicate edges, a node whose only edges point at itself.
std::vector<AwkwardGraph> homogeneous_graphs();

// Knowledge graphs, for `kge train` (DGL-KE's udd layout: entities.dict,
// relations.dict, train/valid/test.txt as id triples "h r t"):
//  - "kg-rare": a relation with one training triple, a relation that occurs
//    only in the test set, entities without any triple.
std::vector<AwkwardGraph> knowledge_graphs();

// Writes `graph` (one of the above) into dir/<name>.
void write_awkward_graph(const AwkwardGraph& graph, const std::string& dir);

}  // namespace tessera::testing
