"""tessera.distributed: dgl.distributed's API over Tessera's C++ core.

initialize, DistGraph, DistTensor, DistEmbedding, node_split / edge_split, the partition book and its
policies, the data loaders, and the sparse optimizers (tessera.distributed.optim).
"""
from . import optim
from .context import exit_client, initialize
from .graph import DistGraph
from .partition_book import (EdgePartitionPolicy, GraphPartitionBook, NodePartitionPolicy, PartitionPolicy,
                             RangePartitionBook)
from .split import edge_split, node_split
from .tensor import DistEmbedding, DistTensor


def __getattr__(name):
    # The loaders live in tessera.dataloading (which imports this package);
    # DGL exports them from dgl.distributed as well.
    if name in ("DistNodeDataLoader", "DistDataLoader"):
        from .. import dataloading
        return getattr(dataloading, name)
    raise AttributeError(f"module 'tessera.distributed' has no attribute {name!r}")
