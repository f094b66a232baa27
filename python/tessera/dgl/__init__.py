"""Tessera under DGL's module paths, so that a DistDGL training script runs with only its DGL imports changed:

    import dgl                      ->  import tessera.dgl as dgl
    import dgl.nn.pytorch as dglnn  ->  import tessera.dgl.nn.pytorch as dglnn
    from dgl.distributed import X   ->  from tessera.dgl.distributed import X
    import dgl.function as fn       ->  import tessera.dgl.function as fn
"""
from .. import EID, ETYPE, NID, NTYPE  # noqa: F401
from ..dataloading.block import Block as DGLBlock  # noqa: F401
from ..dataloading.transforms import to_block  # noqa: F401
from . import dataloading, distributed, function, nn  # noqa: F401

# A sampled block is the graph object a distributed training loop holds.
DGLGraph = DGLBlock
DGLHeteroGraph = DGLBlock


class DGLError(RuntimeError):
    """DGL's error type; Tessera raises the Python built-ins (ValueError, KeyError, ...) or RuntimeError."""
