"""dgl.distributed's names, from tessera.distributed."""
from ...distributed import *  # noqa: F401,F403
from ...distributed import (DistEmbedding, DistGraph, DistTensor, EdgePartitionPolicy, GraphPartitionBook,  # noqa: F401
                            NodePartitionPolicy, PartitionPolicy, RangePartitionBook, edge_split, exit_client,
                            initialize, node_split)
from ...dataloading import DistDataLoader, DistNodeDataLoader  # noqa: F401
from . import optim  # noqa: F401
