"""Which partition owns which node and edge: dgl.distributed's RangePartitionBook and partition policies.

After Tessera's reshuffle every partition owns one contiguous range of homogeneous IDs per type, so the book is
a few range boundaries per type (from the partition config's node_map / edge_map) and every query is a
searchsorted over them.
"""
import torch

DEFAULT_NTYPE = "_N"
DEFAULT_ETYPE = ("_N", "_E", "_N")


def _as_ids(ids):
    ids = torch.as_tensor(ids)
    if ids.dim() == 0:
        ids = ids.reshape(1)
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"IDs must be integers, not {ids.dtype}")
    return ids.to(torch.int64)


class _TypeRanges:
    """One type's ranges: partition p owns homogeneous IDs [first[p], last[p]) and type-local IDs
    [starts[p], starts[p+1])."""

    def __init__(self, ranges):
        self.first = torch.tensor([r[0] for r in ranges], dtype=torch.int64)
        self.last = torch.tensor([r[1] for r in ranges], dtype=torch.int64)
        sizes = self.last - self.first
        self.starts = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(sizes, 0)])

    @property
    def size(self):
        return int(self.starts[-1])

    def owner_of_local(self, ids, what):
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.size):
            bad = ids[(ids < 0) | (ids >= self.size)][0]
            raise IndexError(f"{what} ID {int(bad)} is outside 0..{self.size - 1}")
        return torch.searchsorted(self.starts, ids, right=True) - 1


def policy_sizes(info):
    """[("node:<ntype>" | "edge:<etype>", rows)] of every node type, then every edge type."""
    return ([(f"node:{t}", _TypeRanges(r).size) for t, r in zip(info["ntypes"], info["node_map"])] +
            [(f"edge:{t}", _TypeRanges(r).size) for t, r in zip(info["etypes"], info["edge_map"])])


class TypesOfBook:
    """The node and edge types of something built over a partition book (``self._book``): DGL's
    ntypes / etypes / canonical_etypes and the type-ID lookups, shared by DistGraph and HeteroBlock."""

    @property
    def ntypes(self):
        return self._book.ntypes

    @property
    def etypes(self):
        return self._book.etypes

    @property
    def canonical_etypes(self):
        return self._book.canonical_etypes

    def to_canonical_etype(self, etype):
        return self._book.canonical_etypes[self._book._etype_id(etype)]

    def get_ntype_id(self, ntype):
        return self._book._ntype_id(ntype)

    def get_etype_id(self, etype):
        return self._book._etype_id(etype)


class GraphPartitionBook:
    """DGL's RangePartitionBook over a Tessera partition config (as the C++ core read it)."""

    def __init__(self, info):
        self._info = info
        self._partid = info["local_part"] if info["local_part"] >= 0 else info["machine_id"]
        self._ntypes = list(info["ntypes"])
        self._canonical = [tuple(e.split(":")) for e in info["etypes"]]
        self._nodes = [_TypeRanges(r) for r in info["node_map"]]
        self._edges = [_TypeRanges(r) for r in info["edge_map"]]
        # Homogeneous order is partition-major, type-minor: range k = (part, type).
        firsts, types = [], []
        for p in range(info["num_parts"]):
            for t, ranges in enumerate(self._nodes):
                firsts.append(int(ranges.first[p]))
                types.append(t)
        order = sorted(range(len(firsts)), key=lambda k: firsts[k])
        self._homo_first = torch.tensor([firsts[k] for k in order], dtype=torch.int64)
        self._homo_type = torch.tensor([types[k] for k in order], dtype=torch.int64)
        self._homo_part = torch.tensor([k // len(self._nodes) for k in order], dtype=torch.int64)

    # --- DGL's attributes ---
    @property
    def partid(self):
        return self._partid

    def num_partitions(self):
        return self._info["num_parts"]

    @property
    def ntypes(self):
        return list(self._ntypes)

    @property
    def etypes(self):
        return [c[1] for c in self._canonical]

    @property
    def canonical_etypes(self):
        return list(self._canonical)

    def metadata(self):
        return [{"machine_id": p,
                 "num_nodes": sum(int(r.last[p] - r.first[p]) for r in self._nodes),
                 "num_edges": sum(int(r.last[p] - r.first[p]) for r in self._edges)}
                for p in range(self.num_partitions())]

    def _ntype_id(self, ntype):
        if ntype == DEFAULT_NTYPE and len(self._ntypes) == 1:
            return 0
        if ntype not in self._ntypes:
            raise KeyError(f"node type {ntype!r} is not in the graph (it has {self._ntypes})")
        return self._ntypes.index(ntype)

    def _etype_id(self, etype):
        if etype in (DEFAULT_ETYPE, "_E") and len(self._canonical) == 1:
            return 0
        if isinstance(etype, tuple):
            if etype not in self._canonical:
                raise KeyError(f"edge type {etype} is not in the graph (it has {self._canonical})")
            return self._canonical.index(etype)
        matches = [i for i, c in enumerate(self._canonical) if c[1] == etype]
        if len(matches) != 1:
            raise KeyError(f"edge type {etype!r} names {len(matches)} of the graph's edge types; "
                           f"give a canonical (src, rel, dst) tuple")
        return matches[0]

    def _homogeneous(self):
        return len(self._ntypes) == 1

    def nid2partid(self, nids, ntype=DEFAULT_NTYPE):
        """Owning partition of node IDs (type-local IDs of `ntype`; homogeneous IDs on a graph with one type)."""
        ids = _as_ids(nids)
        if ntype == DEFAULT_NTYPE and not self._homogeneous():
            return self._homo_part[self._homo_range(ids)]
        return self._nodes[self._ntype_id(ntype)].owner_of_local(ids, "node")

    def eid2partid(self, eids, etype=DEFAULT_ETYPE):
        return self._edges[self._etype_id(etype)].owner_of_local(_as_ids(eids), "edge")

    def partid2nids(self, partid, ntype=DEFAULT_NTYPE):
        """The node IDs partition `partid` owns (type-local IDs of `ntype`)."""
        self._check_part(partid)
        if ntype == DEFAULT_NTYPE and not self._homogeneous():
            return torch.cat([torch.arange(int(r.first[partid]), int(r.last[partid])) for r in self._nodes])
        r = self._nodes[self._ntype_id(ntype)]
        return torch.arange(int(r.starts[partid]), int(r.starts[partid + 1]), dtype=torch.int64)

    def partid2eids(self, partid, etype=DEFAULT_ETYPE):
        self._check_part(partid)
        r = self._edges[self._etype_id(etype)]
        return torch.arange(int(r.starts[partid]), int(r.starts[partid + 1]), dtype=torch.int64)

    def nid2localnid(self, nids, partid, ntype=DEFAULT_NTYPE):
        self._check_part(partid)
        r = self._nodes[self._ntype_id(ntype)]
        return _as_ids(nids) - r.starts[partid]

    def map_to_per_ntype(self, ids):
        """Homogeneous node IDs -> (node type IDs, type-local IDs)."""
        ids = _as_ids(ids)
        k = self._homo_range(ids)
        types = self._homo_type[k]
        parts = self._homo_part[k]
        local = torch.empty_like(ids)
        for t, r in enumerate(self._nodes):
            sel = types == t
            local[sel] = ids[sel] - r.first[parts[sel]] + r.starts[parts[sel]]
        return types, local

    def map_to_homo_nid(self, ids, ntype):
        ids = _as_ids(ids)
        r = self._nodes[self._ntype_id(ntype)]
        parts = r.owner_of_local(ids, "node")
        return ids - r.starts[parts] + r.first[parts]

    def map_to_per_etype(self, ids):
        """Edge IDs of a graph with one edge type -> (edge type IDs, IDs)."""
        ids = _as_ids(ids)
        if len(self._canonical) != 1:
            raise NotImplementedError("map_to_per_etype of a graph with several edge types: Tessera's edge IDs "
                                      "are already per type")
        return torch.zeros_like(ids), ids

    def _homo_range(self, ids):
        size = int(self._info["num_nodes"])
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= size):
            bad = ids[(ids < 0) | (ids >= size)][0]
            raise IndexError(f"node ID {int(bad)} is outside 0..{size - 1}")
        return torch.searchsorted(self._homo_first, ids, right=True) - 1

    def _check_part(self, partid):
        if not 0 <= int(partid) < self.num_partitions():
            raise IndexError(f"partition {partid} is outside 0..{self.num_partitions() - 1}")

    def get_node_policy(self, ntype=DEFAULT_NTYPE):
        return PartitionPolicy("node:" + self._ntypes[self._ntype_id(ntype)], self)

    def get_edge_policy(self, etype=DEFAULT_ETYPE):
        return PartitionPolicy("edge:" + ":".join(self._canonical[self._etype_id(etype)]), self)


RangePartitionBook = GraphPartitionBook


class PartitionPolicy:
    """How a DistTensor's rows are sharded: "node:<ntype>" or "edge:<src:rel:dst>", as DGL names them."""

    def __init__(self, policy_str, partition_book=None):
        if not (policy_str.startswith("node:") or policy_str.startswith("edge:")):
            raise ValueError(f"a partition policy is 'node:<ntype>' or 'edge:<etype>', not {policy_str!r}")
        self.policy_str = policy_str
        self.partition_book = partition_book

    @property
    def type_name(self):
        return self.policy_str.split(":", 1)[1]

    def __repr__(self):
        return f"PartitionPolicy({self.policy_str!r})"


class NodePartitionPolicy(PartitionPolicy):
    def __init__(self, partition_book, ntype=DEFAULT_NTYPE):
        super().__init__(partition_book.get_node_policy(ntype).policy_str, partition_book)


class EdgePartitionPolicy(PartitionPolicy):
    def __init__(self, partition_book, etype=DEFAULT_ETYPE):
        super().__init__(partition_book.get_edge_policy(etype).policy_str, partition_book)
