"""dgl.to_block: a frontier (a Graph from sample_neighbors / in_subgraph) as a Block for a GNN layer."""
import torch

from .. import EID, NID, _C
from .block import Block
from .graph import Graph
from .hetero_block import HeteroBlock
from .hetero_graph import HeteroGraph


def to_block(g, dst_nodes=None, include_dst_in_src=True, src_nodes=None):
    """The block whose destinations are `dst_nodes` (default: the nodes with in-edges, ascending) and whose
    sources are, with include_dst_in_src, the destinations first and then every other source of an edge in
    order of first appearance. srcdata / dstdata[dgl.NID] hold the nodes' IDs in `g` (or g.ndata[dgl.NID]
    where `g` has it), edata[dgl.EID] the edges' IDs (g.edata[dgl.EID], or their positions in `g`), and every
    other edge feature of `g` follows its edges. A typed frontier (a HeteroGraph from a typed DistGraph) gives
    a HeteroBlock: dst_nodes is then {ntype: type-local IDs}, and every relation's edges and edge data follow."""
    if isinstance(g, HeteroGraph):
        return _typed_to_block(g, dst_nodes, include_dst_in_src, src_nodes)
    if not isinstance(g, Graph):
        raise TypeError(f"to_block takes a graph from sample_neighbors / in_subgraph, not {type(g).__name__}")
    if src_nodes is not None:
        raise ValueError("to_block(src_nodes=...): Tessera orders the sources itself (destinations first); "
                         "leave src_nodes unset")
    if isinstance(dst_nodes, dict):
        if len(dst_nodes) != 1:
            raise ValueError(f"to_block: this graph has one node type; dst_nodes has {len(dst_nodes)}")
        dst_nodes = next(iter(dst_nodes.values()))
    src, dst = g.edges()
    if dst_nodes is None:
        dst_nodes = torch.unique(dst)
    dst_nodes = torch.as_tensor(dst_nodes, dtype=torch.int64)
    eids = g.edata[EID] if EID in g.edata else torch.arange(len(src))
    if include_dst_in_src:
        num_dst, block_src, indptr, indices, block_eids, order = _C.to_block(src, dst, eids, dst_nodes,
                                                                            g.num_nodes())
    else:
        num_dst, block_src, indptr, indices, block_eids, order = _sources_apart(src, dst, eids, dst_nodes,
                                                                               g.num_nodes())
    ids = g.ndata.get(NID)
    block = Block(num_dst, block_src if ids is None else ids[block_src], indptr, indices, block_eids,
                  dst_nodes=None if include_dst_in_src and ids is None else (
                      dst_nodes if ids is None else ids[dst_nodes]))
    for name, value in g.edata.items():
        if name != EID:
            block.edata[name] = value[order]
    for name, value in g.ndata.items():
        if name != NID:
            block.srcdata[name] = value[block_src]
            block.dstdata[name] = value[dst_nodes]
    return block


def _sources_apart(src, dst, eids, dst_nodes, num_nodes):
    """to_block's relabelling when the destinations are not sources unless an edge starts at them."""
    if len(src) and (int(src.min()) < 0 or int(src.max()) >= num_nodes):
        raise IndexError(f"to_block: an edge source is outside 0..{num_nodes - 1}")
    position = torch.full((num_nodes,), -1, dtype=torch.int64)
    position[dst_nodes] = torch.arange(len(dst_nodes))
    dst_pos = position[dst]
    if bool((dst_pos < 0).any()):
        bad = int(dst[dst_pos < 0][0])
        raise ValueError(f"to_block: an edge ends at node {bad}, which is not among the destination nodes")
    order = torch.argsort(dst_pos, stable=True)
    # Sources in order of first appearance along the block's edges.
    first = torch.full((num_nodes,), len(src), dtype=torch.int64)
    first.scatter_reduce_(0, src[order], torch.arange(len(src)), "amin")
    block_src = torch.unique(src)
    block_src = block_src[torch.argsort(first[block_src])]
    position[:] = -1
    position[block_src] = torch.arange(len(block_src))
    indptr = torch.cat([torch.zeros(1, dtype=torch.int64),
                        torch.cumsum(torch.bincount(dst_pos, minlength=len(dst_nodes)), 0)])
    return len(dst_nodes), block_src, indptr, position[src[order]], eids[order], order


def _typed_to_block(g, dst_nodes, include_dst_in_src, src_nodes):
    """to_block of a typed frontier: its relations in homogeneous IDs through the same relabelling, as the
    HeteroBlock the typed loader yields (each type's destinations first among its sources)."""
    book = getattr(g, "_book", None)
    if book is None:
        raise TypeError("to_block of a typed graph takes a frontier from sample_neighbors / in_subgraph on a "
                        "typed DistGraph")
    if not include_dst_in_src or src_nodes is not None:
        raise ValueError("to_block of a typed frontier keeps each type's destinations first among its sources: "
                         "leave include_dst_in_src=True and src_nodes unset")
    if dst_nodes is None:
        dst_nodes = {}
        for c in g.canonical_etypes:
            dst_nodes.setdefault(c[2], []).append(g.edges(etype=c)[1])
        dst_nodes = {nt: torch.unique(torch.cat(ids)) for nt, ids in dst_nodes.items()}
    if not isinstance(dst_nodes, dict):
        raise ValueError(f"to_block: this frontier has node types {g.ntypes}; give dst_nodes as {{ntype: IDs}}")
    for nt in dst_nodes:
        if nt not in g.ntypes:
            raise KeyError(f"to_block: dst_nodes names node type {nt!r}, which is not among {g.ntypes}")
    dst = torch.cat([book.map_to_homo_nid(torch.as_tensor(dst_nodes[nt], dtype=torch.int64), nt)
                     for nt in g.ntypes if nt in dst_nodes] + [torch.zeros(0, dtype=torch.int64)])
    src, dst_of_edge, eids, types, data = [], [], [], [], []
    for r, c in enumerate(book.canonical_etypes):
        if c not in g.canonical_etypes:
            continue
        u, v = g.edges(etype=c)
        frame = g.edges[c].data
        if EID not in frame:
            raise ValueError(f"to_block: relation {c} has no edata[dgl.EID]; typed frontiers from "
                             f"sample_neighbors have them")
        src.append(book.map_to_homo_nid(u, c[0]))
        dst_of_edge.append(book.map_to_homo_nid(v, c[2]))
        eids.append(book.map_to_homo_eid(frame[EID], c))
        types.append(torch.full((len(u),), r, dtype=torch.int64))
        data.append((c, frame))
    cat = (lambda parts: torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64))
    src, dst_of_edge, eids, types = cat(src), cat(dst_of_edge), cat(eids), cat(types)
    num_nodes = sum(book.num_nodes(nt) for nt in book.ntypes)
    num_dst, block_src, indptr, indices, block_eids, order = _C.to_block(src, dst_of_edge, eids, dst, num_nodes)
    block_types = types[order]
    block = HeteroBlock(num_dst, block_src, indptr, indices, block_eids, block_types,
                        book.map_to_per_ntype(block_src)[0], book)
    # Other edge data follows its edges: a relation's block edges are its edges in block order.
    starts = torch.cumsum(torch.tensor([0] + [len(f[EID]) for _, f in data]), 0)
    for k, (c, frame) in enumerate(data):
        extra = [name for name in frame if name != EID]
        if extra:
            rows = order[block_types == book.canonical_etypes.index(c)] - starts[k]
            for name in extra:
                block[c].edata[name] = frame[name][rows]
    return block
