"""node_split / edge_split: each trainer's share of a set of IDs (DGL's semantics)."""
import math

import numpy as np
import torch

from .. import _C
from . import context
from .tensor import DistTensor


def _even_share(ids, rank, world):
    """DGL's even split, as the C++ node_split takes it: shares differ by at most one, in ID order."""
    start, end = _C.even_range(len(ids), rank, world)
    return ids[start:end]


def _split(mask, force_even, node_trainer_ids, rank, c_split, what):
    info = context.ensure_initialized()
    world = info["world_size"]
    own_rank = info["rank"]
    rank = own_rank if rank is None else int(rank)
    if not 0 <= rank < world:
        raise ValueError(f"{what}: rank {rank} is outside 0..{world - 1}")
    if isinstance(mask, DistTensor):
        if node_trainer_ids is None and rank == own_rank:
            return c_split(mask._c, bool(force_even))
        # Another trainer's share, or trainer IDs: read the mask here, held to the C++ split's rule.
        if mask.dtype not in (torch.bool, torch.uint8) or math.prod(mask.shape[1:]) != 1:
            raise ValueError(f"{what}: {mask.name} is not a bool mask (dtype {mask.dtype}, shape {tuple(mask.shape)})")
        mask = mask[torch.arange(len(mask))]
    elif not isinstance(mask, torch.Tensor):
        try:
            mask = torch.as_tensor(np.asarray(mask))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: expected a mask (tensor, numpy array or list), not {type(mask).__name__} "
                            f"({e})") from None
    # As DGL: whatever it holds, the argument is a mask, and its non-zero
    # positions are the IDs (so node_split(np.arange(n)) leaves out node 0).
    mask = torch.as_tensor(mask)
    if mask.dim() > 1:
        if math.prod(mask.shape[1:]) != 1:
            raise ValueError(f"{what}: a mask has one value per ID, not shape {tuple(mask.shape)}")
        mask = mask.reshape(len(mask))
    ids = torch.nonzero(mask).flatten()
    if node_trainer_ids is not None:
        owners = node_trainer_ids[ids] if isinstance(node_trainer_ids, DistTensor) else \
            torch.as_tensor(node_trainer_ids)[ids]
        return ids[owners.flatten().to(torch.int64) == rank]
    return _even_share(ids, rank, world)


def node_split(nodes, partition_book=None, ntype="_N", rank=None, force_even=True, node_trainer_ids=None):
    """This trainer's share of the nodes a mask selects (a boolean DistTensor such as g.ndata['train_mask'], or
    a tensor / array treated as a mask, as DGL does). Returns type-local IDs, sorted. force_even=False (shares
    of the trainer's own partition) applies to this trainer's share of a DistTensor; another rank's share, or
    a mask held here, is split evenly."""
    return _split(nodes, force_even, node_trainer_ids, rank, _C.node_split, "node_split")


def edge_split(edges, partition_book=None, etype="_E", rank=None, force_even=True, edge_trainer_ids=None):
    """edge_split: node_split for edges."""
    return _split(edges, force_even, edge_trainer_ids, rank, _C.edge_split, "edge_split")
