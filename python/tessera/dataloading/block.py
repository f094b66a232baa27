"""Block: one layer of a sampled mini-batch (DGL's message-flow graph, a DGLBlock).

Destinations are the first num_dst sources (DGL's convention); edges are stored by destination (DGL's CSC),
which is what aggregation reads. Every array is a torch tensor that owns the C++ sampler's buffer.
"""
import torch

from .. import EID, NID


class _Frame(dict):
    """srcdata / dstdata / edata: a dict whose values have one row per node (edge)."""

    def __init__(self, rows, what, items=()):
        super().__init__(items)
        self._rows = rows
        self._what = what

    def __setitem__(self, key, value):
        if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape[0] != self._rows:
            raise ValueError(f"{self._what}[{key!r}] needs {self._rows} rows, not {value.shape[0]}")
        super().__setitem__(key, value)


class Block:
    """A DGLBlock: number_of_src_nodes(), srcdata[dgl.NID], edges(), to(device), ..."""

    is_block = True

    def __init__(self, num_dst, src_nodes, indptr, indices, eids, etypes=None, src_ntypes=None, graph_info=None):
        self._num_dst = int(num_dst)
        self.src_nodes = src_nodes
        self.indptr = indptr
        self.indices = indices
        self._eids = eids
        self._etypes = etypes
        self._src_ntypes = src_ntypes
        self._info = graph_info
        self.srcdata = _Frame(len(src_nodes), "srcdata", {NID: src_nodes})
        self.dstdata = _Frame(self._num_dst, "dstdata", {NID: src_nodes[: self._num_dst]})
        self.edata = _Frame(len(indices), "edata", {EID: eids})
        self._dst_index = None

    # --- sizes ---
    def number_of_src_nodes(self, ntype=None):
        return len(self.src_nodes) if ntype is None else int(self.srctype_counts()[ntype])

    def number_of_dst_nodes(self, ntype=None):
        return self._num_dst if ntype is None else int(self.dsttype_counts()[ntype])

    num_src_nodes = number_of_src_nodes
    num_dst_nodes = number_of_dst_nodes

    def number_of_edges(self, etype=None):
        return len(self.indices)

    num_edges = number_of_edges

    @property
    def device(self):
        return self.indptr.device

    @property
    def idtype(self):
        return torch.int64

    # --- structure ---
    def dst_of_edges(self):
        """Each edge's destination (0..num_dst-1), in edge order."""
        if self._dst_index is None:
            degrees = self.indptr[1:] - self.indptr[:-1]
            self._dst_index = torch.repeat_interleave(torch.arange(self._num_dst, device=self.indptr.device),
                                                      degrees)
        return self._dst_index

    def edges(self, form="uv", order="eid"):
        """(sources, destinations) of the block's edges as positions among its src / dst nodes."""
        if form == "uv":
            return self.indices, self.dst_of_edges()
        if form == "eid":
            return torch.arange(len(self.indices))
        if form == "all":
            return self.indices, self.dst_of_edges(), torch.arange(len(self.indices))
        raise ValueError(f"edges(form=...) is 'uv', 'eid' or 'all', not {form!r}")

    def in_degrees(self, v=None):
        deg = self.indptr[1:] - self.indptr[:-1]
        return deg if v is None else deg[torch.as_tensor(v)]

    def out_degrees(self, u=None):
        deg = torch.bincount(self.indices, minlength=len(self.src_nodes))
        return deg if u is None else deg[torch.as_tensor(u)]

    def adj_tensors(self, fmt="csc"):
        """The adjacency as tensors: 'csc' (indptr by destination, source positions, edge positions) or 'coo'."""
        if fmt == "csc":
            return self.indptr, self.indices, torch.arange(len(self.indices))
        if fmt == "coo":
            return self.edges()
        raise ValueError(f"adj_tensors: Tessera's blocks give 'csc' or 'coo', not {fmt!r}")

    def with_self_loops(self):
        """A copy in which every destination also has an edge from itself (its source position d), placed first
        among its in-edges: the self-loops DGL's examples add to the graph before sampling."""
        deg = self.indptr[1:] - self.indptr[:-1]
        indptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(deg + 1, 0)])
        indices = torch.empty(len(self.indices) + self._num_dst, dtype=torch.int64)
        eids = torch.full((len(indices),), -1, dtype=torch.int64)
        own = indptr[:-1]
        indices[own] = torch.arange(self._num_dst)
        rest = torch.ones(len(indices), dtype=torch.bool)
        rest[own] = False
        indices[rest] = self.indices
        eids[rest] = self._eids
        return Block(self._num_dst, self.src_nodes, indptr, indices, eids, None, self._src_ntypes, self._info)

    def to(self, device, **kwargs):
        device = torch.device(device)
        if device == self.device:
            return self
        moved = Block(self._num_dst, self.src_nodes.to(device), self.indptr.to(device), self.indices.to(device),
                      self._eids.to(device), None if self._etypes is None else self._etypes.to(device),
                      None if self._src_ntypes is None else self._src_ntypes.to(device), self._info)
        for frame, target in ((self.srcdata, moved.srcdata), (self.dstdata, moved.dstdata),
                              (self.edata, moved.edata)):
            for k, v in frame.items():
                dict.__setitem__(target, k, v.to(device) if isinstance(v, torch.Tensor) else v)
        return moved

    def local_scope(self):
        return _Scope(self)

    # --- heterogeneous blocks ---
    @property
    def srctypes(self):
        return list(self._info["ntypes"]) if self._info else ["_N"]

    @property
    def dsttypes(self):
        return self.srctypes

    @property
    def ntypes(self):
        return self.srctypes

    @property
    def canonical_etypes(self):
        return [tuple(e.split(":")) for e in self._info["etypes"]] if self._info else [("_N", "_E", "_N")]

    @property
    def etypes(self):
        return [c[1] for c in self.canonical_etypes]

    def srctype_counts(self):
        if self._src_ntypes is None:
            return {self.srctypes[0]: len(self.src_nodes)}
        counts = torch.bincount(self._src_ntypes.to(torch.int64), minlength=len(self.srctypes))
        return {t: int(c) for t, c in zip(self.srctypes, counts)}

    def dsttype_counts(self):
        if self._src_ntypes is None:
            return {self.dsttypes[0]: self._num_dst}
        counts = torch.bincount(self._src_ntypes[: self._num_dst].to(torch.int64), minlength=len(self.dsttypes))
        return {t: int(c) for t, c in zip(self.dsttypes, counts)}

    def __repr__(self):
        return (f"Block(num_src_nodes={self.number_of_src_nodes()}, num_dst_nodes={self.number_of_dst_nodes()}, "
                f"num_edges={self.number_of_edges()})")


class _Scope:
    """graph.local_scope(): data set inside is dropped on exit, as DGL does."""

    def __init__(self, block):
        self._block = block

    def __enter__(self):
        b = self._block
        self._saved = [dict(f) for f in (b.srcdata, b.dstdata, b.edata)]
        return b

    def __exit__(self, *exc):
        b = self._block
        for frame, saved in zip((b.srcdata, b.dstdata, b.edata), self._saved):
            dict.clear(frame)
            dict.update(frame, saved)
        return False
