"""Graph: a graph given by its edge lists over nodes 0..num_nodes-1 — what DGL returns as a DGLGraph from the
distributed graph services (a sampled frontier, an in-subgraph, an edge subgraph) and what an edge loader yields
as its pair graphs. ndata / edata, edges(), local_scope(), apply_edges() and update_all() work as in DGL;
dgl.to_block() turns a frontier into a Block.
"""
import torch

from .. import EID
from .block import _Copies, _Frame
from .message_passing import MessagePassing


class Graph(_Copies, MessagePassing):
    """Graph(src, dst, num_nodes, eids=None): edges src[i] -> dst[i]; eids, if given, is edata[dgl.EID] (the
    edges' IDs in the graph they came from)."""

    is_block = False

    def __init__(self, src, dst, num_nodes, eids=None, canonical_etype=None):
        if len(src) != len(dst):
            raise ValueError(f"{len(src)} sources but {len(dst)} destinations")
        self._src, self._dst = src, dst
        self._num_nodes = int(num_nodes)
        self._canonical = canonical_etype or ("_N", "_E", "_N")
        self.ndata = _Frame(self._num_nodes, "ndata")
        self.edata = _Frame(len(src), "edata", {} if eids is None else {EID: eids})

    # A graph's sources and destinations are its nodes.
    @property
    def srcdata(self):
        return self.ndata

    @property
    def dstdata(self):
        return self.ndata

    # --- sizes ---
    def num_nodes(self, ntype=None):
        return self._num_nodes

    number_of_nodes = num_src_nodes = num_dst_nodes = number_of_src_nodes = number_of_dst_nodes = num_nodes

    def num_edges(self, etype=None):
        return len(self._src)

    number_of_edges = num_edges

    def nodes(self, ntype=None):
        return torch.arange(self._num_nodes)

    @property
    def device(self):
        return self._src.device

    @property
    def idtype(self):
        return torch.int64

    @property
    def ntypes(self):
        return list(dict.fromkeys([self._canonical[0], self._canonical[2]]))

    @property
    def etypes(self):
        return [self._canonical[1]]

    @property
    def canonical_etypes(self):
        return [self._canonical]

    def is_homogeneous(self):
        return True

    # --- structure ---
    def edges(self, form="uv", order="eid", etype=None):
        """(sources, destinations), edge positions ('eid') or all three, in edge order."""
        if form == "uv":
            return self._src, self._dst
        if form == "eid":
            return torch.arange(len(self._src))
        if form == "all":
            return self._src, self._dst, torch.arange(len(self._src))
        raise ValueError(f"edges(form=...) is 'uv', 'eid' or 'all', not {form!r}")

    all_edges = edges

    def find_edges(self, eid, etype=None):
        eid = torch.as_tensor(eid, dtype=torch.int64)
        if len(eid) and (int(eid.min()) < 0 or int(eid.max()) >= len(self._src)):
            raise IndexError(f"edge IDs must be in 0..{len(self._src) - 1}")
        return self._src[eid], self._dst[eid]

    def in_degrees(self, v=None, etype=None):
        deg = torch.bincount(self._dst, minlength=self._num_nodes)
        return deg if v is None else deg[torch.as_tensor(v)]

    def out_degrees(self, u=None, etype=None):
        deg = torch.bincount(self._src, minlength=self._num_nodes)
        return deg if u is None else deg[torch.as_tensor(u)]

    # --- message passing (message_passing.py) ---
    def _mp_endpoints(self):
        return self._src, self._dst

    def _mp_frames(self):
        return self.ndata, self.ndata, self.edata

    def _mp_num_dst(self):
        return self._num_nodes

    def _mp_csr(self):
        return None

    # --- copies (block._Copies) ---
    def _copy(self, move):
        copy = Graph.__new__(Graph)
        copy.__dict__.update(self.__dict__)
        copy._src, copy._dst = move(self._src), move(self._dst)
        copy.ndata, copy.edata = self.ndata.copy_with(move), self.edata.copy_with(move)
        return copy

    def _frames(self):
        return [self.ndata, self.edata]

    def __repr__(self):
        return f"Graph(num_nodes={self._num_nodes}, num_edges={len(self._src)}, ndata={list(self.ndata)}, " \
               f"edata={list(self.edata)})"
