"""HeteroGraph: a graph of several node or edge types given by each relation's edge lists in type-local IDs —
what DGL returns as a heterogeneous DGLGraph from the distributed graph services on a typed DistGraph (a sampled
frontier, an in-subgraph, an edge subgraph) and what an edge loader yields as its pair graphs there.

As in DGL: g.ndata[name] and g.edata[name] are {type: tensor} when the graph has several node (edge) types, and
a tensor when it has one; g.nodes[ntype].data and g.edges[etype].data are one type's frame; g.edges(etype=...)
lists a relation's ends; apply_edges and update_all take etype= (None: every relation, and update_all sums what
the relations send to the same node type, as DGL's cross-type reducer "sum" does).
"""
from types import SimpleNamespace

import torch

from .. import EID
from .block import _Copies, _Frame
from .hetero_block import _TypedData
from .message_passing import ALL, MessagePassing


class _Relation(MessagePassing):
    """One relation of a HeteroGraph as message passing sees it; dst_frame may stand in for its destinations'."""

    def __init__(self, graph, canonical, dst_frame=None):
        self._g, self._c = graph, canonical
        self._dst_frame = dst_frame

    def _mp_endpoints(self):
        return self._g._edges[self._c][:2]

    def _mp_frames(self):
        g = self._g
        dst = self._dst_frame if self._dst_frame is not None else g._node_frames[self._c[2]]
        return g._node_frames[self._c[0]], dst, g._edge_frames[self._c]

    def _mp_num_dst(self):
        return self._g.num_nodes(self._c[2])

    def _mp_csr(self):
        return None

    def num_edges(self):
        return len(self._g._edges[self._c][0])


class _NodeView:
    """g.nodes: g.nodes(ntype) lists a type's nodes; g.nodes[ntype].data is its frame."""

    def __init__(self, graph):
        self._g = graph

    def __call__(self, ntype=None):
        return torch.arange(self._g.num_nodes(self._g._one_ntype(ntype)))

    def __getitem__(self, ntype):
        return SimpleNamespace(data=self._g._node_frames[self._g._ntype(ntype)])


class _EdgeView:
    """g.edges: g.edges(form, order, etype) lists a relation's edges; g.edges[etype].data is its frame."""

    def __init__(self, graph):
        self._g = graph

    def __call__(self, form="uv", order="eid", etype=None):
        src, dst, _ = self._g._edges[self._g._one_etype(etype, "edges")]
        if form == "uv":
            return src, dst
        if form == "eid":
            return torch.arange(len(src))
        if form == "all":
            return src, dst, torch.arange(len(src))
        raise ValueError(f"edges(form=...) is 'uv', 'eid' or 'all', not {form!r}")

    def __getitem__(self, etype):
        return SimpleNamespace(data=self._g._edge_frames[self._g.to_canonical_etype(etype)])


class HeteroGraph(_Copies):
    """HeteroGraph(num_nodes, relations): num_nodes is {ntype: count}; relations is {(src, rel, dst): (src IDs,
    dst IDs, edge IDs or None)} in type-local IDs, the edge IDs becoming edges[etype].data[dgl.EID]."""

    is_block = False

    def __init__(self, num_nodes, relations):
        self._num_nodes = {t: int(n) for t, n in num_nodes.items()}
        self._edges = {}
        for c, (src, dst, eids) in relations.items():
            if len(src) != len(dst):
                raise ValueError(f"relation {c}: {len(src)} sources but {len(dst)} destinations")
            for t in (c[0], c[2]):
                if t not in self._num_nodes:
                    raise KeyError(f"relation {c} names node type {t!r}, which is not among {list(self._num_nodes)}")
            self._edges[c] = (src, dst, eids)
        self._node_frames = {t: _Frame(n, f"nodes[{t!r}].data") for t, n in self._num_nodes.items()}
        self._edge_frames = {c: _Frame(len(s), f"edges[{c}].data", {} if e is None else {EID: e})
                             for c, (s, _, e) in self._edges.items()}

    # --- types ---
    @property
    def ntypes(self):
        return list(self._num_nodes)

    @property
    def canonical_etypes(self):
        return list(self._edges)

    @property
    def etypes(self):
        return [c[1] for c in self._edges]

    @property
    def srctypes(self):
        return self.ntypes

    dsttypes = srctypes

    def is_homogeneous(self):
        return len(self._num_nodes) == 1 and len(self._edges) == 1

    def to_canonical_etype(self, etype):
        if isinstance(etype, tuple):
            if etype not in self._edges:
                raise KeyError(f"edge type {etype} is not in this graph (it has {self.canonical_etypes})")
            return etype
        matches = [c for c in self._edges if c[1] == etype]
        if len(matches) != 1:
            raise KeyError(f"edge type {etype!r} names {len(matches)} of this graph's edge types "
                           f"({self.canonical_etypes}); give a (src, rel, dst) tuple")
        return matches[0]

    def _ntype(self, ntype):
        if ntype not in self._num_nodes:
            raise KeyError(f"node type {ntype!r} is not in this graph (it has {self.ntypes})")
        return ntype

    def _one_ntype(self, ntype):
        if ntype is None:
            if len(self._num_nodes) != 1:
                raise ValueError(f"this graph has {len(self._num_nodes)} node types; pass ntype=")
            return self.ntypes[0]
        return self._ntype(ntype)

    def _one_etype(self, etype, what):
        if etype is None:
            if len(self._edges) != 1:
                raise ValueError(f"{what}: this graph has {len(self._edges)} edge types; pass etype=")
            return self.canonical_etypes[0]
        return self.to_canonical_etype(etype)

    # --- sizes ---
    def num_nodes(self, ntype=None):
        return sum(self._num_nodes.values()) if ntype is None else self._num_nodes[self._ntype(ntype)]

    number_of_nodes = num_nodes

    def num_edges(self, etype=None):
        if etype is None:
            return sum(len(s) for s, _, _ in self._edges.values())
        return len(self._edges[self.to_canonical_etype(etype)][0])

    number_of_edges = num_edges

    @property
    def device(self):
        return next(iter(self._edges.values()))[0].device if self._edges else torch.device("cpu")

    @property
    def idtype(self):
        return torch.int64

    # --- data ---
    @property
    def ndata(self):
        if len(self._node_frames) == 1:
            return next(iter(self._node_frames.values()))
        return _TypedData(self._node_frames)

    srcdata = dstdata = ndata

    @property
    def edata(self):
        if len(self._edge_frames) == 1:
            return next(iter(self._edge_frames.values()))
        return _TypedData(self._edge_frames)

    @property
    def nodes(self):
        return _NodeView(self)

    @property
    def edges(self):
        return _EdgeView(self)

    def all_edges(self, form="uv", order="eid", etype=None):
        return self.edges(form, order, etype)

    # --- structure ---
    def find_edges(self, eid, etype=None):
        src, dst, _ = self._edges[self._one_etype(etype, "find_edges")]
        eid = torch.as_tensor(eid, dtype=torch.int64)
        if len(eid) and (int(eid.min()) < 0 or int(eid.max()) >= len(src)):
            raise IndexError(f"edge IDs must be in 0..{len(src) - 1}")
        return src[eid], dst[eid]

    def in_degrees(self, v=None, etype=None):
        c = self._one_etype(etype, "in_degrees")
        deg = torch.bincount(self._edges[c][1], minlength=self._num_nodes[c[2]])
        return deg if v is None else deg[torch.as_tensor(v)]

    def out_degrees(self, u=None, etype=None):
        c = self._one_etype(etype, "out_degrees")
        deg = torch.bincount(self._edges[c][0], minlength=self._num_nodes[c[0]])
        return deg if u is None else deg[torch.as_tensor(u)]

    # --- message passing, per relation ---
    def apply_edges(self, func, edges=ALL, etype=None):
        for c in ([self.to_canonical_etype(etype)] if etype is not None else self.canonical_etypes):
            _Relation(self, c).apply_edges(func, edges)

    def update_all(self, message_func, reduce_func, apply_node_func=None, etype=None):
        if etype is not None or len(self._edges) == 1:
            _Relation(self, self._one_etype(etype, "update_all")).update_all(message_func, reduce_func,
                                                                             apply_node_func)
            return
        # Every relation into a scratch copy of its destinations' frame, then the sum per destination type.
        sums = {}
        for c in self.canonical_etypes:
            real = self._node_frames[c[2]]
            scratch = _Frame(self._num_nodes[c[2]], f"nodes[{c[2]!r}].data", real)
            _Relation(self, c, scratch).update_all(message_func, reduce_func, apply_node_func)
            for name, value in scratch.items():
                if real.get(name) is not value:
                    sums.setdefault(c[2], {})
                    sums[c[2]][name] = value if name not in sums[c[2]] else sums[c[2]][name] + value
        for ntype, results in sums.items():
            for name, value in results.items():
                self._node_frames[ntype][name] = value

    # --- copies (block._Copies) ---
    def _copy(self, move):
        copy = HeteroGraph.__new__(HeteroGraph)
        copy.__dict__.update(self.__dict__)
        copy._num_nodes = dict(self._num_nodes)
        copy._edges = {c: (move(s), move(d), None if e is None else move(e)) for c, (s, d, e) in self._edges.items()}
        copy._node_frames = {t: f.copy_with(move) for t, f in self._node_frames.items()}
        copy._edge_frames = {c: f.copy_with(move) for c, f in self._edge_frames.items()}
        return copy

    def _frames(self):
        return list(self._node_frames.values()) + list(self._edge_frames.values())

    def __repr__(self):
        return (f"HeteroGraph(num_nodes={self._num_nodes}, "
                f"num_edges={ {c: len(s) for c, (s, _, _) in self._edges.items()} })")
