"""Which partition owns which node and edge: dgl.distributed's RangePartitionBook and partition policies.

The book itself is the C++ core's (``_C.PartitionBook``, the one every server and trainer uses): after
Tessera's reshuffle every partition owns one contiguous range of IDs per type, and each query is a binary
search over those ranges, run over the whole ID tensor in C++.
"""
import torch

from .. import _C

DEFAULT_NTYPE = "_N"
DEFAULT_ETYPE = ("_N", "_E", "_N")


def _as_ids(ids):
    ids = torch.as_tensor(ids)
    if ids.dim() == 0:
        ids = ids.reshape(1)
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"IDs must be integers, not {ids.dtype}")
    return ids.to(torch.int64)


def _type_size(ranges):
    return sum(last - first for first, last in ranges)


def policy_sizes(info):
    """[("node:<ntype>" | "edge:<etype>", rows)] of every node type, then every edge type."""
    return ([(f"node:{t}", _type_size(r)) for t, r in zip(info["ntypes"], info["node_map"])] +
            [(f"edge:{t}", _type_size(r)) for t, r in zip(info["etypes"], info["edge_map"])])


class GraphPartitionBook:
    """DGL's RangePartitionBook over a Tessera partition config: the C++ core's PartitionBook (``_C``) answers
    every ownership and ID-mapping query over whole tensors; this class keeps DGL's names and arguments."""

    def __init__(self, info, book=None):
        self._info = info
        self._c = book if book is not None else (_C.PartitionBook.of_job() if _C.is_initialized()
                                                 else _C.PartitionBook(info["part_config"]))
        self._partid = info["local_part"] if info["local_part"] >= 0 else info["machine_id"]
        self._ntypes = list(info["ntypes"])
        self._canonical = [tuple(e.split(":")) for e in info["etypes"]]

    # --- DGL's attributes ---
    @property
    def partid(self):
        return self._partid

    def num_partitions(self):
        return self._c.num_parts

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
        node_starts = [self._c.starts(self._node_policy(t)) for t in range(len(self._ntypes))]
        edge_starts = [self._c.starts(self._edge_policy(k)) for k in range(len(self._canonical))]
        return [{"machine_id": p,
                 "num_nodes": sum(s[p + 1] - s[p] for s in node_starts),
                 "num_edges": sum(s[p + 1] - s[p] for s in edge_starts)}
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

    def _node_policy(self, ntype_id):
        return "node:" + self._ntypes[ntype_id]

    def _edge_policy(self, etype_id):
        return "edge:" + ":".join(self._canonical[etype_id])

    def _homogeneous(self):
        return len(self._ntypes) == 1

    def num_nodes(self, ntype=DEFAULT_NTYPE):
        return self._c.starts(self._node_policy(self._ntype_id(ntype)))[-1]

    def num_edges(self, etype=DEFAULT_ETYPE):
        return self._c.starts(self._edge_policy(self._etype_id(etype)))[-1]

    def nid2partid(self, nids, ntype=DEFAULT_NTYPE):
        """Owning partition of node IDs (type-local IDs of `ntype`; homogeneous IDs on a graph with one type)."""
        ids = _as_ids(nids)
        if ntype == DEFAULT_NTYPE and not self._homogeneous():
            return self._c.split_homogeneous(ids)[2]
        return self._c.owners(self._node_policy(self._ntype_id(ntype)), ids, "node")

    def eid2partid(self, eids, etype=DEFAULT_ETYPE):
        return self._c.owners(self._edge_policy(self._etype_id(etype)), _as_ids(eids), "edge")

    def partid2nids(self, partid, ntype=DEFAULT_NTYPE):
        """The node IDs partition `partid` owns (type-local IDs of `ntype`)."""
        self._check_part(partid)
        if ntype == DEFAULT_NTYPE and not self._homogeneous():
            parts = []
            for t in range(len(self._ntypes)):
                starts = self._c.starts(self._node_policy(t))
                first = self._c.homogeneous_first(t)[partid]
                parts.append(torch.arange(first, first + starts[partid + 1] - starts[partid], dtype=torch.int64))
            return torch.cat(parts)
        starts = self._c.starts(self._node_policy(self._ntype_id(ntype)))
        return torch.arange(starts[partid], starts[partid + 1], dtype=torch.int64)

    def partid2eids(self, partid, etype=DEFAULT_ETYPE):
        self._check_part(partid)
        starts = self._c.starts(self._edge_policy(self._etype_id(etype)))
        return torch.arange(starts[partid], starts[partid + 1], dtype=torch.int64)

    def nid2localnid(self, nids, partid, ntype=DEFAULT_NTYPE):
        self._check_part(partid)
        return _as_ids(nids) - self._c.starts(self._node_policy(self._ntype_id(ntype)))[partid]

    def map_to_per_ntype(self, ids):
        """Homogeneous node IDs -> (node type IDs, type-local IDs)."""
        types, local, _ = self._c.split_homogeneous(_as_ids(ids))
        return types, local

    def map_to_homo_nid(self, ids, ntype):
        return self._c.homogeneous(self._ntype_id(ntype), _as_ids(ids))

    def map_to_per_etype(self, ids):
        """Homogeneous edge IDs -> (edge type IDs, type-local IDs)."""
        return self._c.split_homogeneous_edges(_as_ids(ids))

    def map_to_homo_eid(self, ids, etype):
        """Type-local edge IDs of `etype` -> homogeneous edge IDs."""
        return self._c.homogeneous_edges(self._etype_id(etype), _as_ids(ids))

    def _check_part(self, partid):
        if not 0 <= int(partid) < self.num_partitions():
            raise IndexError(f"partition {partid} is outside 0..{self.num_partitions() - 1}")

    def get_node_policy(self, ntype=DEFAULT_NTYPE):
        return PartitionPolicy(self._node_policy(self._ntype_id(ntype)), self)

    def get_edge_policy(self, etype=DEFAULT_ETYPE):
        return PartitionPolicy(self._edge_policy(self._etype_id(etype)), self)


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
