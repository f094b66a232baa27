"""A mini-batch's blocks laid out as PyG's sampled subgraph.

Tessera's sampler gives one block per layer, and every block samples all of its destinations: the seeds are
sampled again at each hop. PyG's NeighborLoader samples hop h only from the nodes hop h-1 discovered, with
`num_neighbors[h-1]` each. Both list the nodes the same way — the seeds first, then each hop's new nodes in the
order they were found — because a block's sources start with its destinations, so every block indexes the same
node list (the first block's sources). The layout keeps, per hop, the edges into that hop's frontier (the kept
nodes the previous hop added), and the nodes those edges reach; edges are (source, target) as PyG's
`edge_index` has them, rows 0 and 1.
"""
from dataclasses import dataclass

import torch


@dataclass
class Subgraph:
    nodes: torch.Tensor       # [n] homogeneous IDs, the seeds first (PyG's n_id)
    src: torch.Tensor         # [m] positions in `nodes` of each edge's source
    dst: torch.Tensor         # [m] ... and target
    eids: torch.Tensor        # [m] homogeneous edge IDs (PyG's e_id)
    etypes: torch.Tensor      # [m] edge types, or None on a graph of one type
    kept: torch.Tensor        # [len(first block's sources)] bool: which of them are `nodes`
    num_seeds: int


def _layer(block):
    """(num_dst, src_nodes, indptr, indices, eids, etypes) of a Block or HeteroBlock."""
    raw = getattr(block, "_raw", None)
    if raw is not None:
        return raw[:6]
    return block.num_dst_nodes(), block.src_nodes, block.indptr, block.indices, block.edata["_ID"], None


def pyg_subgraph(blocks):
    layers = [_layer(b) for b in blocks]
    all_nodes = layers[0][1]
    num_seeds = int(layers[-1][0])
    kept = torch.zeros(len(all_nodes), dtype=torch.bool)
    kept[:num_seeds] = True
    lo, hi = 0, num_seeds  # this hop's frontier: the kept positions in [lo, hi)
    src, dst, eids, etypes = [], [], [], []
    for num_dst, src_nodes, indptr, indices, layer_eids, layer_etypes in reversed(layers):
        degrees = indptr[1:] - indptr[:-1]
        targets = torch.repeat_interleave(torch.arange(int(num_dst)), degrees)
        into_frontier = (targets >= lo) & (targets < hi)
        into_frontier &= kept[targets]
        sources = indices[into_frontier]
        src.append(sources)
        dst.append(targets[into_frontier])
        eids.append(layer_eids[into_frontier])
        if layer_etypes is not None:
            etypes.append(layer_etypes[into_frontier].to(torch.int64))
        kept[sources] = True
        lo, hi = hi, len(src_nodes)
    position = torch.cumsum(kept, 0) - 1  # a kept position's index among the kept nodes
    return Subgraph(all_nodes[kept], position[torch.cat(src)], position[torch.cat(dst)], torch.cat(eids),
                    torch.cat(etypes) if etypes else None, kept, num_seeds)
