"""DGL's graph services on a DistGraph (dgl.distributed.sample_neighbors, in_subgraph, find_edges, ...): each
is answered by the machines that own the nodes or edges, one request per owner, by C++ on the servers."""
import torch

from .. import EID, NID, _C
from ..dataloading.graph import Graph
from .tensor import to_ids

ALL = "__ALL__"


def _check_homogeneous(g, what):
    if len(g.canonical_etypes) != 1:
        raise ValueError(f"{what}: this graph has {len(g.canonical_etypes)} edge types; Tessera answers {what} on "
                         f"graphs of one edge type today (sample a typed graph with DistNodeDataLoader, whose "
                         f"{{ntype: IDs}} seeds and {{etype: n}} fanouts give heterogeneous blocks)")


def _nodes(g, nodes, what):
    if isinstance(nodes, dict):
        if len(nodes) != 1 or len(g.ntypes) != 1:
            raise ValueError(f"{what}: give the node IDs as one tensor on a graph of one node type")
        nodes = next(iter(nodes.values()))
    ids = to_ids(nodes, what).to(torch.int64)
    n = g.num_nodes()
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
        bad = ids[(ids < 0) | (ids >= n)][0]
        raise IndexError(f"{what}: node {int(bad)} is outside 0..{n - 1}")
    return ids


def _fanout(g, fanout):
    """(fanout, per-edge-type fanouts) for the C++ sampler."""
    if isinstance(fanout, dict):
        per_type = []
        for etype in g.canonical_etypes:
            matches = [v for k, v in fanout.items() if g.to_canonical_etype(k) == etype]
            if not matches:
                raise KeyError(f"fanout has no entry for edge type {etype} (give every type one)")
            per_type.append(int(matches[0]))
        unknown = [k for k in fanout if g.to_canonical_etype(k) not in g.canonical_etypes]
        if unknown:
            raise KeyError(f"fanout names unknown edge types {unknown}")
        return -1, per_type
    fanout = int(fanout)
    if fanout < -1:
        raise ValueError(f"fanout {fanout}: a fanout is a count >= 0 or -1 (every in-edge)")
    return fanout, []


def sample_neighbors(g, nodes, fanout, edge_dir="in", prob=None, exclude_edges=None, replace=False,
                     etype_sorted=True, output_device=None):
    """Up to `fanout` in-edges of each node (-1: all), uniformly or in proportion to the edge feature named by
    `prob`, as a graph over g's node IDs whose edata[dgl.EID] holds the edges' IDs. exclude_edges: edge IDs
    left out of the result. torch.manual_seed fixes the choice."""
    if edge_dir != "in":
        raise ValueError("edge_dir: Tessera's partitions hold in-edges; sample_neighbors samples edge_dir='in'")
    if prob is not None and not isinstance(prob, str):
        raise TypeError(f"prob names an edge feature (g.edata[prob]), not {type(prob).__name__}")
    if prob is not None and prob not in g.edata:
        raise KeyError(f"prob={prob!r}: the graph has no edge feature of that name (it has {g.edata.keys()})")
    _check_homogeneous(g, "sample_neighbors")
    nodes = torch.unique(_nodes(g, nodes, "sample_neighbors nodes"))
    fan, per_type = _fanout(g, fanout)
    key = int(torch.randint(0, 2 ** 62, (1,)))
    src, dst, eids, _ = _C.sample_neighbors(nodes, fan, per_type, bool(replace), prob or "", key)
    if exclude_edges is not None:
        keep = ~torch.isin(eids, to_ids(exclude_edges, "exclude_edges").to(torch.int64))
        src, dst, eids = src[keep], dst[keep], eids[keep]
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
    """(sources, destinations) of edges by ID."""
    _check_homogeneous(g, "find_edges")
    eids = to_ids(edge_ids, "find_edges edge IDs").to(torch.int64)
    m = g.num_edges()
    if len(eids) and (int(eids.min()) < 0 or int(eids.max()) >= m):
        bad = eids[(eids < 0) | (eids >= m)][0]
        raise IndexError(f"find_edges: edge {int(bad)} is outside 0..{m - 1}")
    return _C.find_edges(eids)


def in_degrees(g, v=ALL):
    _check_homogeneous(g, "in_degrees")
    nodes = torch.arange(g.num_nodes()) if isinstance(v, str) and v == ALL else _nodes(g, v, "in_degrees")
    return _C.in_degrees(nodes)


def out_degrees(g, u=ALL):
    _check_homogeneous(g, "out_degrees")
    nodes = torch.arange(g.num_nodes()) if isinstance(u, str) and u == ALL else _nodes(g, u, "out_degrees")
    return _C.out_degrees(nodes)


def edge_subgraph(g, edges, relabel_nodes=True, store_ids=True):
    """The graph of edges `edges` (IDs), with its nodes renumbered 0.. (ndata[dgl.NID]: their IDs in g) unless
    relabel_nodes=False; edata[dgl.EID] holds the edges' IDs."""
    eids = to_ids(edges, "edge_subgraph edges").to(torch.int64)
    src, dst = find_edges(g, eids)
    if relabel_nodes:
        nodes, inverse = torch.unique(torch.cat([src, dst]), return_inverse=True)
        sub = Graph(inverse[: len(src)], inverse[len(src):], len(nodes), eids=eids if store_ids else None)
        if store_ids:
            sub.ndata[NID] = nodes
        return sub
    return Graph(src, dst, g.num_nodes(), eids=eids if store_ids else None)


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


__all__ = ["sample_neighbors", "sample_etype_neighbors", "in_subgraph", "find_edges", "edge_subgraph", "EID"]
