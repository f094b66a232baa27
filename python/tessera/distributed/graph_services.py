"""DGL's graph services on a DistGraph (dgl.distributed.sample_neighbors, in_subgraph, find_edges, ...): each
is answered by the machines that own the nodes or edges, one request per owner, by C++ on the servers."""
import torch

from .. import EID, NID, _C
from ..graph.graph import Graph
from ..graph.hetero_graph import HeteroGraph
from .tensor import to_ids

ALL = "__ALL__"


def _typed(g):
    return len(g.canonical_etypes) > 1 or len(g.ntypes) > 1


def _check_range(ids, bound, what, kind="node"):
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= bound):
        bad = ids[(ids < 0) | (ids >= bound)][0]
        raise IndexError(f"{what}: {kind} {int(bad)} is outside 0..{bound - 1}")
    return ids


def _nodes(g, nodes, what):
    """Homogeneous node IDs from DGL's forms: a tensor on a graph of one node type, {ntype: type-local IDs} on a
    typed graph (a tensor there means homogeneous IDs, as DGL's DistGraph takes them)."""
    if isinstance(nodes, dict):
        if not _typed(g):
            if len(nodes) != 1:
                raise ValueError(f"{what}: this graph has one node type; give its IDs, not {len(nodes)} types")
            nodes = next(iter(nodes.values()))
        else:
            book, parts = g.get_partition_book(), []
            for nt, ids in nodes.items():
                if nt not in g.ntypes:
                    raise KeyError(f"{what}: node type {nt!r} is not in the graph (it has {g.ntypes})")
                ids = _check_range(to_ids(ids, what).to(torch.int64), g.num_nodes(nt), f"{what} of type {nt!r}")
                parts.append(book.map_to_homo_nid(ids, nt))
            return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64)
    return _check_range(to_ids(nodes, what).to(torch.int64), g.num_nodes(), what)


def _edges(g, edges, what):
    """Homogeneous edge IDs from a tensor (one edge type) or {etype: type-local IDs}."""
    if isinstance(edges, dict):
        book = g.get_partition_book()
        parts = []
        for etype, ids in edges.items():
            c = g.to_canonical_etype(etype)  # KeyError naming an unknown type
            ids = _check_range(to_ids(ids, what).to(torch.int64), g.num_edges(c), f"{what} of type {c}", "edge")
            parts.append(book.map_to_homo_eid(ids, c))
        return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64)
    if _typed(g) and len(g.canonical_etypes) > 1:
        raise ValueError(f"{what}: this graph has {len(g.canonical_etypes)} edge types; give {{etype: edge IDs}}")
    return _check_range(to_ids(edges, what).to(torch.int64), g.num_edges(), what, "edge")


def _fanout(g, fanout):
    """(fanout, per-edge-type fanouts) for the C++ sampler."""
    if isinstance(fanout, dict):
        per_type = []
        unknown = [k for k in fanout if not _names_etype(g, k)]
        if unknown:
            raise KeyError(f"fanout names unknown edge types {unknown} (the graph has {g.canonical_etypes})")
        for etype in g.canonical_etypes:
            matches = [v for k, v in fanout.items() if g.to_canonical_etype(k) == etype]
            if not matches:
                raise KeyError(f"fanout has no entry for edge type {etype} (give every type one)")
            per_type.append(int(matches[0]))
        return -1, per_type
    fanout = int(fanout)
    if fanout < -1:
        raise ValueError(f"fanout {fanout}: a fanout is a count >= 0 or -1 (every in-edge)")
    return fanout, []


def _names_etype(g, etype):
    try:
        g.to_canonical_etype(etype)
        return True
    except KeyError:
        return False


def _to_hetero(g, src, dst, eids):
    """A frontier in homogeneous IDs as DGL's heterogeneous frontier: per relation, type-local ends and
    edata[dgl.EID] its type-local edge IDs."""
    book = g.get_partition_book()
    _, src = book.map_to_per_ntype(src)
    _, dst = book.map_to_per_ntype(dst)
    types, eids = book.map_to_per_etype(eids)
    relations = {}
    for r, c in enumerate(g.canonical_etypes):
        keep = types == r
        relations[c] = (src[keep], dst[keep], eids[keep])
    frontier = HeteroGraph({nt: g.num_nodes(nt) for nt in g.ntypes}, relations)
    frontier._book = book  # to_block maps the frontier back to homogeneous IDs
    return frontier


def sample_neighbors(g, nodes, fanout, edge_dir="in", prob=None, exclude_edges=None, replace=False,
                     etype_sorted=True, output_device=None):
    """Up to `fanout` in-edges of each node (-1: all), uniformly or in proportion to the edge feature named by
    `prob`, as a graph over g's node IDs whose edata[dgl.EID] holds the edges' IDs. exclude_edges: edge IDs
    left out of the result. torch.manual_seed fixes the choice. On a typed graph, nodes and exclude_edges are
    {type: type-local IDs}, `fanout` counts a node's in-edges of every type together ({etype: n}: per type, as
    sample_etype_neighbors), and the frontier is a HeteroGraph in type-local IDs. A typed graph's nodes given as
    one tensor are homogeneous IDs, and so are the frontier's nodes, edata[dgl.EID] and exclude_edges, as DGL
    0.6-0.9 sampled them (its R-GCN examples map them back with map_to_per_ntype / map_to_per_etype; DGL 2
    refuses the form)."""
    if edge_dir != "in":
        raise ValueError("edge_dir: Tessera's partitions hold in-edges; sample_neighbors samples edge_dir='in'")
    typed = _typed(g) and isinstance(nodes, dict)
    nodes = torch.unique(_nodes(g, nodes, "sample_neighbors nodes"))
    fan, per_type = _fanout(g, fanout)
    key = int(torch.randint(0, 2 ** 62, (1,)))
    src, dst, eids, etypes = _C.sample_neighbors(nodes, fan, per_type, bool(replace), g._edge_weight_tensors(prob),
                                                 key)
    if exclude_edges is not None:
        excluded = (_edges(g, exclude_edges, "exclude_edges") if typed or isinstance(exclude_edges, dict) else
                    _check_range(to_ids(exclude_edges, "exclude_edges").to(torch.int64), g.num_edges(),
                                 "exclude_edges", "edge"))
        keep = ~torch.isin(eids, excluded)
        src, dst, eids = src[keep], dst[keep], eids[keep]
    if typed:
        frontier = _to_hetero(g, src, dst, eids)
    else:
        frontier = Graph(src, dst, g.num_nodes(), eids=eids)
    return frontier.to(output_device) if output_device is not None else frontier


def sample_etype_neighbors(g, nodes, fanout, edge_dir="in", prob=None, exclude_edges=None, replace=False,
                           etype_sorted=True, output_device=None):
    """sample_neighbors with a fanout per edge type ({etype: n}, or one number for every type)."""
    if not isinstance(fanout, dict):
        fanout = {etype: int(fanout) for etype in g.canonical_etypes}
    return sample_neighbors(g, nodes, fanout, edge_dir, prob, exclude_edges, replace, etype_sorted, output_device)


def in_subgraph(g, nodes, output_device=None):
    """Every in-edge of `nodes`, as a graph over g's node IDs with edata[dgl.EID]."""
    return sample_neighbors(g, nodes, -1, output_device=output_device)


def find_edges(g, edge_ids, etype=None):
    """(sources, destinations) of edges by ID: type-local IDs of `etype` on a typed graph."""
    if not _typed(g):
        return _C.find_edges(_edges(g, edge_ids, "find_edges edge IDs"))
    if etype is None:
        raise ValueError(f"find_edges: this graph has edge types {g.canonical_etypes}; pass etype=")
    c = g.to_canonical_etype(etype)
    book = g.get_partition_book()
    src, dst = _C.find_edges(_edges(g, {c: edge_ids}, "find_edges edge IDs"))
    return book.map_to_per_ntype(src)[1], book.map_to_per_ntype(dst)[1]


def _degrees(g, ids, etype, incoming):
    what = "in_degrees" if incoming else "out_degrees"
    if etype is None:  # DGL's DistGraph: homogeneous IDs, every edge
        nodes = torch.arange(g.num_nodes()) if isinstance(ids, str) and ids == ALL else _nodes(g, ids, what)
        return (_C.in_degrees if incoming else _C.out_degrees)(nodes)
    c = g.to_canonical_etype(etype)
    ntype = c[2] if incoming else c[0]
    local = torch.arange(g.num_nodes(ntype)) if isinstance(ids, str) and ids == ALL else ids
    nodes = _nodes(g, {ntype: local}, what)
    return (_C.in_degrees if incoming else _C.out_degrees)(nodes, ":".join(c))


def in_degrees(g, v=ALL, etype=None):
    """In-degrees of nodes; with etype, of type-local IDs of its destination type, counting that type's edges."""
    return _degrees(g, v, etype, True)


def out_degrees(g, u=ALL, etype=None):
    """Out-degrees of nodes; with etype, of type-local IDs of its source type, counting that type's edges."""
    return _degrees(g, u, etype, False)


def edge_subgraph(g, edges, relabel_nodes=True, store_ids=True):
    """The graph of edges `edges` (IDs; {etype: IDs} on a typed graph), with its nodes renumbered 0.. per type
    (ndata[dgl.NID]: their IDs in g) unless relabel_nodes=False; edata[dgl.EID] holds the edges' IDs."""
    if not _typed(g):
        eids = _edges(g, edges, "edge_subgraph edges")
        src, dst = find_edges(g, eids)
        if relabel_nodes:
            nodes, inverse = torch.unique(torch.cat([src, dst]), return_inverse=True)
            sub = Graph(inverse[: len(src)], inverse[len(src):], len(nodes), eids=eids if store_ids else None)
            if store_ids:
                sub.ndata[NID] = nodes
            return sub
        return Graph(src, dst, g.num_nodes(), eids=eids if store_ids else None)
    if not isinstance(edges, dict):
        raise ValueError(f"edge_subgraph: this graph has edge types {g.canonical_etypes}; give {{etype: IDs}}")
    ends = {g.to_canonical_etype(k): (to_ids(v, "edge_subgraph edges").to(torch.int64),) + find_edges(g, v, k)
            for k, v in edges.items()}
    kept = {nt: [] for nt in g.ntypes}
    for c, (_, src, dst) in ends.items():
        kept[c[0]].append(src)
        kept[c[2]].append(dst)
    nodes = {nt: torch.unique(torch.cat(ids)) if ids else torch.zeros(0, dtype=torch.int64)
             for nt, ids in kept.items()}
    relabel = (lambda nt, x: torch.searchsorted(nodes[nt], x)) if relabel_nodes else (lambda nt, x: x)
    sub = HeteroGraph({nt: len(nodes[nt]) if relabel_nodes else g.num_nodes(nt) for nt in g.ntypes},
                      {c: (relabel(c[0], s), relabel(c[2], d), e if store_ids else None)
                       for c, (e, s, d) in ends.items()})
    if relabel_nodes and store_ids:
        for nt in g.ntypes:
            sub.nodes[nt].data[NID] = nodes[nt]
    return sub


def held_out_edges(g, split):
    """The held-out node pairs `split` ("valid" or "test") that `tessera partition --valid-edges / --test-edges`
    took out of the graph and recorded in the partition, as (sources, destinations) in g's node IDs; None when
    the partition has none."""
    import json
    import os

    import numpy as np
    path = g._info["part_config"]
    with open(path) as f:
        files = json.load(f).get("held_out_edges", {})
    if split not in files:
        return None
    pairs = torch.from_numpy(np.load(os.path.join(os.path.dirname(path), files[split])))
    return pairs[:, 0].contiguous(), pairs[:, 1].contiguous()


__all__ = ["sample_neighbors", "sample_etype_neighbors", "in_subgraph", "find_edges", "edge_subgraph", "in_degrees",
           "out_degrees", "EID"]
