"""dgl.distributed's names, from tessera.distributed."""
from ...distributed import *  # noqa: F401,F403
from ...distributed import (DistEmbedding, DistGraph, DistTensor, EdgePartitionPolicy, GraphPartitionBook,  # noqa: F401
                            NodePartitionPolicy, PartitionPolicy, RangePartitionBook, edge_split, exit_client,
                            initialize, node_split)
from ...distributed.graph_services import (edge_subgraph, find_edges, in_subgraph, sample_etype_neighbors,  # noqa: F401
                                           sample_neighbors)
from ...dataloading import DistDataLoader, DistEdgeDataLoader, DistNodeDataLoader  # noqa: F401
from . import optim  # noqa: F401
