"""tessera.distributed: dgl.distributed's API over Tessera's C++ core.

initialize, DistGraph, DistTensor, DistEmbedding, node_split / edge_split, the partition book and its
policies, the graph services (sample_neighbors, in_subgraph, find_edges, ...), the data loaders, and the sparse
optimizers (tessera.distributed.optim). The loaders live in tessera.dataloading, the layer above this one; the
package's root gives them DGL's names here too (dgl.distributed.DistNodeDataLoader).
"""
from . import optim
from .context import exit_client, initialize
from .graph import DistGraph
from .partition_book import (EdgePartitionPolicy, GraphPartitionBook, NodePartitionPolicy, PartitionPolicy,
                             RangePartitionBook)
from .split import edge_split, node_split
from .tensor import DistEmbedding, DistTensor

_GRAPH_SERVICES = ("sample_neighbors", "sample_etype_neighbors", "in_subgraph", "find_edges", "edge_subgraph",
                   "held_out_edges")


def __getattr__(name):
    if name in _GRAPH_SERVICES:
        from . import graph_services
        return getattr(graph_services, name)
    raise AttributeError(f"module 'tessera.distributed' has no attribute {name!r}")
