"""A mini-batch's blocks laid out as PyG's sampled subgraph: the C++ layout (sampling/pyg_layout.h, whose
comment says how blocks become PyG's hops), for loaders that hold their blocks in Python (the link loader).
The node loader has its sampler threads lay batches out before fetching their rows."""
from dataclasses import dataclass

import torch

from .. import _C


@dataclass
class Subgraph:
    num_seeds: int
    nodes: torch.Tensor       # [n] homogeneous IDs, the seeds first (PyG's n_id)
    src: torch.Tensor         # [m] positions in `nodes` of each edge's source
    dst: torch.Tensor         # [m] ... and target
    eids: torch.Tensor        # [m] homogeneous edge IDs (PyG's e_id)
    etypes: torch.Tensor      # [m] edge types, or None on a graph of one type
    nodes_per_hop: list       # PyG's num_sampled_nodes
    edges_per_hop: list       # PyG's num_sampled_edges


def _layer(block):
    """A Block or HeteroBlock as the C++ sampler's tuple: (num_dst, src_nodes, indptr, indices, eids, etypes)."""
    raw = getattr(block, "_raw", None)
    if raw is not None:
        return tuple(raw[:6])
    return block.num_dst_nodes(), block.src_nodes, block.indptr, block.indices, block.edata["_ID"], None


def pyg_subgraph(blocks):
    return Subgraph(*_C.pyg_layout([_layer(b) for b in blocks]))


def positions_of(all_nodes, nodes):
    """Where each of `nodes` is in `all_nodes` (which holds them all, each once)."""
    order = torch.argsort(all_nodes)
    return order[torch.searchsorted(all_nodes[order], nodes)]


def hetero_data(pyg, g, sub, feature, rows=None):
    """The subgraph of a typed graph as PyG's HeteroData: per node type `n_id` (type-local IDs, the seeds of the
    type first), `num_nodes` and `x` (node data `feature`, where the type has it); per edge type `edge_index`
    (indices among its end types' nodes) and `e_id` (type-local edge IDs). `rows`: {ntype: (IDs, their rows of
    `feature`)} fetched ahead, IDs None when the rows follow the type's nodes in `sub.nodes`; a type without an
    entry has its rows pulled here."""
    book = g.get_partition_book()
    rows = rows or {}
    types, local = book.map_to_per_ntype(sub.nodes)
    rank = torch.empty(len(sub.nodes), dtype=torch.int64)  # a node's index among those of its type
    data = pyg.HeteroData()
    for t, nt in enumerate(g.ntypes):
        mine = types == t
        rank[mine] = torch.arange(int(mine.sum()))
        store = data[nt]
        store.n_id = local[mine]
        store.num_nodes = int(mine.sum())
        if nt in rows:
            ids, x = rows[nt]
            store.x = x if ids is None else x[positions_of(ids, store.n_id)]
        elif feature is not None and feature in g.nodes[nt].data:
            store.x = g.nodes[nt].data[feature][store.n_id]
    edge_types, edge_local = book.map_to_per_etype(sub.eids)
    for r, c in enumerate(g.canonical_etypes):
        mine = edge_types == r
        data[c].edge_index = torch.stack([rank[sub.src[mine]], rank[sub.dst[mine]]])
        data[c].e_id = edge_local[mine]
    return data
