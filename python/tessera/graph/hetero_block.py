"""HeteroBlock: one layer of a mini-batch sampled from a graph with several node or edge types (DGL's
heterogeneous DGLBlock).

The C++ sampler (and to_block of a typed frontier) gives every layer in homogeneous form: one list of source
nodes (homogeneous IDs, with their node types), destinations first, and edges by destination with their edge
types and homogeneous IDs. A HeteroBlock presents that
per type as DGL does: each node type's sources in type-local IDs (that type's destinations first, because the
destinations lead the whole list), and g[etype], one Block per relation, built on first use by one stable sort
of the edges by type. Relations keep the destination order, so each is a valid CSR by destination.
"""
from types import SimpleNamespace

import torch

from .. import NID
from .typed import TypesOfBook
from .block import Block, _Copies, _Frame


class _TypedData:
    """srcdata / dstdata / edata of a heterogeneous block: data[name] is {type: tensor} over the types that have
    it; data[name] = {type: tensor} sets it per type (DGL's frames of several types)."""

    def __init__(self, frames):
        self._frames = frames  # type -> _Frame

    def __getitem__(self, name):
        found = {t: f[name] for t, f in self._frames.items() if name in f}
        if not found:
            raise KeyError(f"no type has data {name!r}")
        return found

    def __setitem__(self, name, value):
        if not isinstance(value, dict):
            raise TypeError(f"data {name!r} of a block with several types is set per type: give {{type: tensor}}")
        for t, tensor in value.items():
            if t not in self._frames:
                raise KeyError(f"the block has no type {t!r} (it has {list(self._frames)})")
            self._frames[t][name] = tensor

    def __delitem__(self, name):
        for f in self._frames.values():
            f.pop(name, None)

    def __contains__(self, name):
        return any(name in f for f in self._frames.values())

    def keys(self):
        return list(dict.fromkeys(k for f in self._frames.values() for k in f))

    def __iter__(self):
        return iter(self.keys())


class _Space:
    """block.srcnodes[ntype] / dstnodes[ntype] / edges[etype]: a type's .data."""

    def __init__(self, frames, resolve=lambda key: key):
        self._frames = frames
        self._resolve = resolve

    def __getitem__(self, key):
        frames = self._frames() if callable(self._frames) else self._frames
        return SimpleNamespace(data=frames[self._resolve(key)])


class HeteroBlock(_Copies, TypesOfBook):
    """A heterogeneous DGLBlock: srctypes / dsttypes / canonical_etypes, number_of_src_nodes(ntype),
    srcdata[dgl.NID] ({ntype: type-local IDs}), block[etype] (a Block), to(device), local_var()."""

    is_block = True

    def __init__(self, num_dst, src_nodes, indptr, indices, eids, etypes, src_ntypes, book):
        self._raw = (int(num_dst), src_nodes, indptr, indices, eids, etypes, src_ntypes)
        self._book = book
        self._ntypes = book.ntypes
        self._canonical = book.canonical_etypes
        types, local = book.map_to_per_ntype(src_nodes)
        positions = [torch.nonzero(types == t).flatten() for t in range(len(self._ntypes))]
        # rank[p]: source p's index among the sources of its type.
        self._rank = torch.empty(len(src_nodes), dtype=torch.int64)
        for pos in positions:
            self._rank[pos] = torch.arange(len(pos))
        self._src_ids = [local[pos] for pos in positions]
        self._num_dst = [int((pos < int(num_dst)).sum()) for pos in positions]
        self._src_frames = {nt: _Frame(len(ids), f"srcnodes[{nt!r}].data", {NID: ids})
                            for nt, ids in zip(self._ntypes, self._src_ids)}
        self._dst_frames = {nt: _Frame(n, f"dstnodes[{nt!r}].data", {NID: ids[:n]})
                            for nt, ids, n in zip(self._ntypes, self._src_ids, self._num_dst)}
        self._relations = None  # canonical etype -> Block, on first use
        self.srcdata = _TypedData(self._src_frames)
        self.dstdata = _TypedData(self._dst_frames)
        self.srcnodes = _Space(self._src_frames)
        self.dstnodes = _Space(self._dst_frames)

    # --- types ---
    @property
    def srctypes(self):
        return list(self._ntypes)

    @property
    def dsttypes(self):
        return list(self._ntypes)

    def is_homogeneous(self):
        return False

    # --- sizes ---
    def number_of_src_nodes(self, ntype=None):
        """Source nodes of `ntype` (of every type when None)."""
        if ntype is None:
            return len(self._raw[1])
        return len(self._src_ids[self._book._ntype_id(ntype)])

    def number_of_dst_nodes(self, ntype=None):
        if ntype is None:
            return self._raw[0]
        return self._num_dst[self._book._ntype_id(ntype)]

    num_src_nodes = number_of_src_nodes
    num_dst_nodes = number_of_dst_nodes

    def number_of_edges(self, etype=None):
        if etype is None:
            return len(self._raw[3])
        return self[etype].number_of_edges()

    num_edges = number_of_edges

    @property
    def device(self):
        return self._raw[2].device

    @property
    def idtype(self):
        return torch.int64

    # --- relations ---
    def _relation_blocks(self):
        if self._relations is None:
            num_dst, _, indptr, indices, eids, etypes, _ = self._raw
            device = indptr.device
            dst_pos = torch.repeat_interleave(torch.arange(num_dst, device=device), indptr[1:] - indptr[:-1])
            etypes = (torch.zeros(len(indices), dtype=torch.int64, device=device) if etypes is None
                      else etypes.to(torch.int64))
            # DGL's edata[dgl.EID] of a relation holds type-local edge IDs.
            eids = self._book.map_to_per_etype(eids.cpu())[1].to(device)
            # Stable: within a type, edges stay in destination order.
            order = torch.sort(etypes, stable=True).indices
            bounds = torch.cat([torch.zeros(1, dtype=torch.int64, device=device),
                                torch.cumsum(torch.bincount(etypes, minlength=len(self._canonical)), 0)]).tolist()
            self._relations = {}
            for r, canonical in enumerate(self._canonical):
                seg = order[bounds[r]:bounds[r + 1]]
                s, d = self._book._ntype_id(canonical[0]), self._book._ntype_id(canonical[2])
                dst_local = self._rank[dst_pos[seg]]
                rel_indptr = torch.cat([torch.zeros(1, dtype=torch.int64, device=device),
                                        torch.cumsum(torch.bincount(dst_local, minlength=self._num_dst[d]), 0)])
                self._relations[canonical] = Block(self._num_dst[d], self._src_ids[s], rel_indptr,
                                                   self._rank[indices[seg]], eids[seg],
                                                   self._src_ids[d][: self._num_dst[d]], canonical)
        return self._relations

    def __getitem__(self, etype):
        """The relation `etype` (a name or a (src, rel, dst) tuple) as a Block between its two node types."""
        return self._relation_blocks()[self.to_canonical_etype(etype)]

    @property
    def edata(self):
        return _TypedData({c: b.edata for c, b in self._relation_blocks().items()})

    @property
    def edges(self):
        return _Space(lambda: {c: b.edata for c, b in self._relation_blocks().items()}, self.to_canonical_etype)

    def in_degrees(self, v=None, etype=None):
        return self[self._one_etype(etype, "in_degrees")].in_degrees(v)

    def out_degrees(self, u=None, etype=None):
        return self[self._one_etype(etype, "out_degrees")].out_degrees(u)

    def _one_etype(self, etype, what):
        if etype is None:
            if len(self._canonical) != 1:
                raise ValueError(f"{what}: the block has {len(self._canonical)} edge types; pass etype=")
            return self._canonical[0]
        return etype

    def _copy(self, move):
        copy = HeteroBlock.__new__(HeteroBlock)
        copy.__dict__.update(self.__dict__)
        copy._raw = tuple(move(t) if isinstance(t, torch.Tensor) else t for t in self._raw)
        copy._rank = move(self._rank)
        copy._src_ids = [move(t) for t in self._src_ids]
        copy._src_frames = {nt: f.copy_with(move) for nt, f in self._src_frames.items()}
        copy._dst_frames = {nt: f.copy_with(move) for nt, f in self._dst_frames.items()}
        copy._relations = None if self._relations is None else {
            c: b._copy(move) for c, b in self._relations.items()}
        copy.srcdata, copy.dstdata = _TypedData(copy._src_frames), _TypedData(copy._dst_frames)
        copy.srcnodes, copy.dstnodes = _Space(copy._src_frames), _Space(copy._dst_frames)
        return copy

    def _frames(self):
        return list(self._src_frames.values()) + list(self._dst_frames.values())

    def __repr__(self):
        return (f"HeteroBlock(num_src_nodes={dict(zip(self._ntypes, map(len, self._src_ids)))}, "
                f"num_dst_nodes={dict(zip(self._ntypes, self._num_dst))}, num_edges={len(self._raw[3])})")
