"""Tessera under DGL's module paths, so that a DistDGL training script runs with only its DGL imports changed:

    import dgl                      ->  import tessera.dgl as dgl
    import dgl.nn.pytorch as dglnn  ->  import tessera.dgl.nn.pytorch as dglnn
    from dgl.distributed import X   ->  from tessera.dgl.distributed import X
    import dgl.function as fn       ->  import tessera.dgl.function as fn
"""
from .. import EID, ETYPE, NID, NTYPE  # noqa: F401
from ..graph.block import Block as DGLBlock  # noqa: F401
from ..graph.transforms import to_block  # noqa: F401
from . import dataloading, distributed, function, nn  # noqa: F401

# A sampled block is the graph object a distributed training loop holds.
DGLGraph = DGLBlock
DGLHeteroGraph = DGLBlock


def graph(data, num_nodes=None, idtype=None, device=None):
    """dgl.graph((src, dst), num_nodes=None): a graph of one node and edge type from its edge lists (for pair
    graphs, negative graphs and small graphs a script builds itself)."""
    import torch

    from ..graph.graph import Graph
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise TypeError("dgl.graph takes (sources, destinations)")
    src, dst = (torch.as_tensor(x, dtype=torch.int64) for x in data)
    if src.dim() != 1 or src.shape != dst.shape:
        raise ValueError(f"dgl.graph: sources {tuple(src.shape)} and destinations {tuple(dst.shape)} must be two "
                         f"1-d tensors of one length")
    least = int(torch.cat([src, dst]).max()) + 1 if len(src) else 0
    if len(src) and int(torch.cat([src, dst]).min()) < 0:
        raise ValueError("dgl.graph: node IDs must be >= 0")
    if num_nodes is not None and int(num_nodes) < least:
        raise ValueError(f"dgl.graph: num_nodes={num_nodes} but the edges reach node {least - 1}")
    g = Graph(src, dst, least if num_nodes is None else int(num_nodes))
    return g.to(device) if device is not None else g


class DGLError(RuntimeError):
    """DGL's error type; Tessera raises the Python built-ins (ValueError, KeyError, ...) or RuntimeError."""
