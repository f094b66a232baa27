"""Block: one layer of a sampled mini-batch (DGL's message-flow graph, a DGLBlock).

Destinations are the first num_dst sources (DGL's convention); edges are stored by destination (DGL's CSC),
which is what aggregation reads. A heterogeneous layer is a HeteroBlock (hetero_block.py) of such Blocks, one
per relation. Every array is a torch tensor that owns the C++ sampler's buffer.
"""
import torch

from .. import EID, ETYPE, NID, NTYPE
from .message_passing import MessagePassing


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

    def copy_with(self, move):
        """A frame of its own whose tensors went through `move`."""
        copy = _Frame(self._rows, self._what)
        for k, v in self.items():
            dict.__setitem__(copy, k, move(v) if isinstance(v, torch.Tensor) else v)
        return copy


class _Copies:
    """to(device), local_var() and local_scope() of a block, given its _copy(move) and _frames()."""

    def to(self, device, **kwargs):
        device = torch.device(device)
        if device == self.device:
            return self
        return self._copy(lambda t: t.to(device))

    def local_var(self):
        """A view whose data changes stay out of this block (DGL's local_var)."""
        return self._copy(lambda t: t)

    def local_scope(self):
        """Data set inside the scope is dropped on exit (DGL's local_scope)."""
        return _Scope(self, self._frames())


class Block(_Copies, MessagePassing):
    """A DGLBlock with one source and one destination node type: number_of_src_nodes(), srcdata[dgl.NID],
    edges(), to(device), ...

    It is a whole layer of a homogeneous graph (destinations are then the first num_dst sources), one relation
    of a heterogeneous layer (HeteroBlock[etype]; `dst_nodes` gives the destinations), or a heterogeneous
    layer in homogeneous form, whose srcdata[dgl.NTYPE] and edata[dgl.ETYPE] hold the node and edge types
    (the input of RelGraphConv)."""

    is_block = True

    def __init__(self, num_dst, src_nodes, indptr, indices, eids, dst_nodes=None, canonical_etype=None,
                 type_data=None):
        self._num_dst = int(num_dst)
        self.src_nodes = src_nodes
        self.indptr = indptr
        self.indices = indices
        self._eids = eids
        self._canonical = canonical_etype or ("_N", "_E", "_N")
        self.srcdata = _Frame(len(src_nodes), "srcdata", {NID: src_nodes})
        self.dstdata = _Frame(self._num_dst, "dstdata",
                              {NID: src_nodes[: self._num_dst] if dst_nodes is None else dst_nodes})
        self.edata = _Frame(len(indices), "edata", {EID: eids})
        if type_data is not None:  # homogeneous form: (node type per source, edge type per edge)
            src_ntypes, etypes = type_data
            self.srcdata[NTYPE] = src_ntypes
            self.dstdata[NTYPE] = src_ntypes[: self._num_dst]
            self.edata[ETYPE] = etypes
        self._dst_index = None

    # --- sizes ---
    def number_of_src_nodes(self, ntype=None):
        return len(self.src_nodes)

    def number_of_dst_nodes(self, ntype=None):
        return self._num_dst

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

    @property
    def srctypes(self):
        return [self._canonical[0]]

    @property
    def dsttypes(self):
        return [self._canonical[2]]

    @property
    def ntypes(self):
        return list(dict.fromkeys(self.srctypes + self.dsttypes))

    @property
    def canonical_etypes(self):
        return [self._canonical]

    @property
    def etypes(self):
        return [self._canonical[1]]

    def is_homogeneous(self):
        return True

    # --- structure ---
    def dst_of_edges(self):
        """Each edge's destination (0..num_dst-1), in edge order."""
        if self._dst_index is None:
            degrees = self.indptr[1:] - self.indptr[:-1]
            self._dst_index = torch.repeat_interleave(torch.arange(self._num_dst, device=self.indptr.device),
                                                      degrees)
        return self._dst_index

    def edges(self, form="uv", order="eid", etype=None):
        """(sources, destinations) of the block's edges as positions among its src / dst nodes."""
        if form == "uv":
            return self.indices, self.dst_of_edges()
        if form == "eid":
            return torch.arange(len(self.indices))
        if form == "all":
            return self.indices, self.dst_of_edges(), torch.arange(len(self.indices))
        raise ValueError(f"edges(form=...) is 'uv', 'eid' or 'all', not {form!r}")

    def all_edges(self, form="uv", order="eid", etype=None):
        """DGL's name for every edge of the graph: edges() (a block's edges are in ID order already)."""
        return self.edges(form, order, etype)

    def in_degrees(self, v=None, etype=None):
        deg = self.indptr[1:] - self.indptr[:-1]
        return deg if v is None else deg[torch.as_tensor(v)]

    def out_degrees(self, u=None, etype=None):
        deg = torch.bincount(self.indices, minlength=len(self.src_nodes))
        return deg if u is None else deg[torch.as_tensor(u)]

    def adj_tensors(self, fmt="csc", etype=None):
        """The adjacency as tensors: 'csc' (indptr by destination, source positions, edge positions) or 'coo'."""
        if fmt == "csc":
            return self.indptr, self.indices, torch.arange(len(self.indices))
        if fmt == "coo":
            return self.edges()
        raise ValueError(f"adj_tensors: Tessera's blocks give 'csc' or 'coo', not {fmt!r}")

    def with_self_loops(self):
        """A copy in which every destination also has an edge from itself (its source position d), placed first
        among its in-edges: the self-loops DGL's examples add to the graph before sampling."""
        if ETYPE in self.edata or self._canonical[0] != self._canonical[2]:
            raise ValueError("with_self_loops: a relation between two node types, or a heterogeneous layer, has "
                             "no self-loops to add")
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
        return Block(self._num_dst, self.src_nodes, indptr, indices, eids, self.dstdata[NID], self._canonical)

    # --- message passing (message_passing.py): sources u, destinations v, by destination ---
    def _mp_endpoints(self):
        return self.indices, self.dst_of_edges()

    def _mp_frames(self):
        return self.srcdata, self.dstdata, self.edata

    def _mp_num_dst(self):
        return self._num_dst

    def _mp_csr(self):
        return self.indptr, self.indices

    def _copy(self, move):
        """The same block with every tensor passed through `move` and frames of its own."""
        copy = Block.__new__(Block)
        copy.__dict__.update(self.__dict__)
        copy.src_nodes, copy.indptr, copy.indices, copy._eids = (move(t) for t in (self.src_nodes, self.indptr,
                                                                                     self.indices, self._eids))
        copy._dst_index = None
        copy.srcdata, copy.dstdata, copy.edata = (f.copy_with(move) for f in self._frames())
        return copy

    def _frames(self):
        return [self.srcdata, self.dstdata, self.edata]

    def __repr__(self):
        return (f"Block(num_src_nodes={self.number_of_src_nodes()}, num_dst_nodes={self.number_of_dst_nodes()}, "
                f"num_edges={self.number_of_edges()})")


class _Scope:
    """graph.local_scope(): data set inside is dropped on exit, as DGL does."""

    def __init__(self, graph, frames):
        self._graph = graph
        self._frames = frames

    def __enter__(self):
        self._saved = [dict(f) for f in self._frames]
        return self._graph

    def __exit__(self, *exc):
        for frame, saved in zip(self._frames, self._saved):
            dict.clear(frame)
            dict.update(frame, saved)
        return False
