"""DistEdgeDataLoader: edge mini-batches for link prediction, (input_nodes, pair_graph, neg_pair_graph, blocks)
per batch. Tessera's C++ sampler threads find the batch's edges, draw their negatives, and sample the blocks of
the pairs' nodes with the batch's edges (and their reverses) left out, ahead of the training loop; node features
the loop reads are prefetched as DistNodeDataLoader does."""
import torch

from .. import NID, _C
from ..distributed import context
from ..distributed.tensor import to_ids
from ..graph.graph import Graph
from ..graph.hetero_graph import HeteroGraph
from .loader import DistNodeDataLoader, check_loader_arguments
from .negative_sampler import BUILT_IN

_EXCLUDE = (None, "self", "reverse_id", "reverse_types", "reverse")


class EdgePredictionSampler:
    """as_edge_prediction_sampler(sampler, exclude=None, reverse_eids=None, reverse_etypes=None,
    negative_sampler=None): a node sampler turned into an edge one (DGL 0.8's form of the loader's arguments)."""

    def __init__(self, sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                 prefetch_labels=None):
        self.sampler = sampler
        self.exclude = exclude
        self.reverse_eids = reverse_eids
        self.reverse_etypes = reverse_etypes
        self.negative_sampler = negative_sampler


def as_edge_prediction_sampler(sampler, exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None,
                               prefetch_labels=None):
    return EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)


class DistEdgeDataLoader(DistNodeDataLoader):
    """DistEdgeDataLoader(g, eids, graph_sampler, negative_sampler=None, exclude=None, reverse_eids=None,
    reverse_etypes=None, batch_size=1, shuffle=False, drop_last=False): iterating gives (input_nodes, pair_graph,
    neg_pair_graph, blocks), or (input_nodes, pair_graph, blocks) without a negative sampler. The pair graphs are
    over the batch's nodes (ndata[dgl.NID]: their IDs; blocks[-1]'s destinations are the same nodes);
    pair_graph.edata[dgl.EID] holds the batch's edge IDs. exclude: None, "self" (the batch's edges),
    "reverse_id" (those and reverse_eids[those]) or a function of the batch's edge IDs giving the IDs to leave
    out of the blocks; Tessera adds "reverse": every edge joining a batch pair's two nodes, either way (the
    reverses without a reverse_eids map, as `tessera train link --exclude reverse`).

    On a typed graph, eids is {etype: type-local IDs}; the pair graphs are HeteroGraphs over each node type's
    seeds (nodes[ntype].data[dgl.NID], in the order of blocks[-1]'s destinations of that type); negatives keep
    their edge's type and draw their ends from its node types; exclude="reverse_types" with
    reverse_etypes={etype: reverse etype} leaves out the batch's edges and, for each edge u -> v, the edges
    v -> u of its reverse type (found by their ends, since Tessera numbers each type's edges on its own);
    exclude="reverse_id" takes reverse_eids={etype: type-local reverse IDs within that type}; and a function
    given as exclude or negative_sampler is called as DGL calls it, with {etype: type-local edge IDs}.
    num_samplers and cache_remote_features are DistNodeDataLoader's."""

    def __init__(self, g, eids, graph_sampler, device=None, batch_size=1, shuffle=False, drop_last=False,
                 exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None, num_samplers=None,
                 cache_remote_features=None, _pairs=None, **kwargs):
        if isinstance(graph_sampler, EdgePredictionSampler):
            exclude = graph_sampler.exclude if exclude is None else exclude
            reverse_eids = graph_sampler.reverse_eids if reverse_eids is None else reverse_eids
            reverse_etypes = graph_sampler.reverse_etypes if reverse_etypes is None else reverse_etypes
            negative_sampler = graph_sampler.negative_sampler if negative_sampler is None else negative_sampler
            graph_sampler = graph_sampler.sampler
        check_loader_arguments("DistEdgeDataLoader", g, batch_size, kwargs, {"num_workers"})
        self._cache_fraction = context.cache_fraction(cache_remote_features)
        info = context.ensure_initialized()
        typed = len(g.canonical_etypes) > 1 or len(g.ntypes) > 1
        # tessera.pyg's link loader batches node pairs (src, dst, edge type ID or -1) of its own: eids then
        # index them.
        pairs = (empty_ids(), empty_ids(), -1) if _pairs is None else _pairs
        self._pairs = _pairs is not None
        eids = _homogeneous_eids(g, eids, typed) if _pairs is None else eids
        exclude_name, reverse, reverse_types, exclude_callback = _exclusion(g, eids, exclude, reverse_eids,
                                                                            reverse_etypes, typed)
        negatives, negative_callback = _negatives(g, negative_sampler, typed)
        self._g, self._info, self._book = g, info, g.get_partition_book()
        self._device = torch.device(device) if device is not None else None
        self._seed_ntypes = list(g.ntypes) if typed else None  # typed: HeteroBlocks
        self._ntype = info["ntypes"][0] if len(info["ntypes"]) == 1 else None
        self._plan_prefetch(g, graph_sampler, labels=False)
        self._negative = negative_sampler is not None
        samplers = info["num_samplers"] if num_samplers is None else int(num_samplers)
        seed = int(torch.randint(0, 2 ** 62, (1,)))
        self._c = context.register_loader(_C.DataLoader.for_edges(
            graph_sampler.c_sampler(g), eids, int(batch_size), bool(shuffle), bool(drop_last), samplers, seed,
            negatives, getattr(negative_sampler, "k", 0), getattr(negative_sampler, "exclude_self_loops", True),
            getattr(negative_sampler, "replace", False), exclude_name, reverse, reverse_types,
            exclude_callback, negative_callback, *pairs))
        self._begin()

    def __iter__(self):
        for input_nodes, seeds, blocks, pairs in self._epoch_batches():
            eids, src, dst, neg_src, neg_dst, etypes, neg_etypes = pairs
            pair_graph = self._pair_graph(seeds, src, dst, eids, etypes)
            if not self._negative:
                yield input_nodes, pair_graph, blocks
                continue
            yield input_nodes, pair_graph, self._pair_graph(seeds, neg_src, neg_dst, None, neg_etypes), blocks

    def _pair_graph(self, seeds, src, dst, eids, etypes):
        """The pairs (src[i], dst[i]) — positions in `seeds` — as a graph over the seeds; on a typed graph, a
        HeteroGraph over each type's seeds in the order of blocks[-1]'s destinations of that type."""
        if etypes is None:
            graph = Graph(src, dst, len(seeds), eids=eids)
            graph.ndata[NID] = seeds
        else:
            graph = _typed_pair_graph(self._book, seeds, src, dst, eids, etypes, local_eids=not self._pairs)
        return graph.to(self._device) if self._device is not None else graph


def _typed_pair_graph(book, seeds, src, dst, eids, etypes, local_eids=True):
    """local_eids: eids are homogeneous edge IDs, given per relation as type-local ones (else kept as they are:
    the indices of node pairs)."""
    types, local = book.map_to_per_ntype(seeds)
    rank = torch.empty(len(seeds), dtype=torch.int64)  # a seed's position among the seeds of its type
    num_nodes = {}
    for t, nt in enumerate(book.ntypes):
        mine = types == t
        rank[mine] = torch.arange(int(mine.sum()))
        num_nodes[nt] = int(mine.sum())
    if eids is not None and local_eids:
        eids = book.map_to_per_etype(eids)[1]
    relations = {}
    for r, c in enumerate(book.canonical_etypes):
        keep = etypes == r
        relations[c] = (rank[src[keep]], rank[dst[keep]], None if eids is None else eids[keep])
    graph = HeteroGraph(num_nodes, relations)
    for t, nt in enumerate(book.ntypes):
        graph.nodes[nt].data[NID] = local[types == t]
    return graph


EdgeDataLoader = DistEdgeDataLoader


def empty_ids():
    return torch.zeros(0, dtype=torch.int64)


def _check_range(ids, bound, what):
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= bound):
        bad = ids[(ids < 0) | (ids >= bound)][0]
        raise IndexError(f"{what}: edge {int(bad)} is outside 0..{bound - 1}")


def _homogeneous_eids(g, eids, typed):
    """The loader's edge IDs as homogeneous IDs: a tensor, or {etype: type-local IDs} on a typed graph."""
    if isinstance(eids, dict):
        if not typed:
            if len(eids) != 1:
                raise ValueError(f"eids: this graph has one edge type; give its IDs, not {len(eids)} types")
            etype, eids = next(iter(eids.items()))
            if g.to_canonical_etype(etype) != g.canonical_etypes[0]:
                raise KeyError(f"eids: unknown edge type {etype!r} (the graph has {g.canonical_etypes})")
        else:
            book, parts = g.get_partition_book(), []
            for etype, ids in eids.items():
                c = g.to_canonical_etype(etype)  # KeyError naming an unknown type
                ids = to_ids(ids, "DistEdgeDataLoader eids").to(torch.int64)
                _check_range(ids, g.num_edges(c), f"DistEdgeDataLoader eids of {c}")
                parts.append(book.map_to_homo_eid(ids, c))
            return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.int64)
    elif typed and len(g.canonical_etypes) > 1:
        raise ValueError(f"eids: this graph has edge types {g.canonical_etypes}; give {{etype: edge IDs}}")
    eids = to_ids(eids, "DistEdgeDataLoader eids").to(torch.int64)
    _check_range(eids, g.num_edges(), "DistEdgeDataLoader eids")
    return eids


def _negatives(g, negative_sampler, typed):
    """(the C++ loader's negative mode, the callable it calls or None): DGL's three built-in samplers run in
    C++; any other callable sampler(g, eids) -> (sources, destinations) is called on the sampler thread. On a
    typed graph it is called as DGL calls it, with {etype: type-local IDs}, and gives {etype: (sources,
    destinations)} in type-local node IDs."""
    if negative_sampler is None:
        return "", None
    if type(negative_sampler) in BUILT_IN:
        return negative_sampler.mode, None
    if not callable(negative_sampler):
        raise TypeError(f"negative_sampler: give Uniform(k), PerSourceUniform(k), GlobalUniform(k) or a function "
                        f"(g, eids) -> (sources, destinations), not {negative_sampler!r}")
    if typed:
        return "callback", _TypedNegatives(g, negative_sampler)

    def sample(eids):
        src, dst = negative_sampler(g, eids)
        return torch.as_tensor(src, dtype=torch.int64), torch.as_tensor(dst, dtype=torch.int64)
    return "callback", sample


class _TypedNegatives:
    """A user's negative sampler on a typed graph, between the C++ loader's homogeneous IDs and DGL's typed
    forms: called with a batch's homogeneous edge IDs, it asks the sampler with {etype: type-local IDs} and
    returns its pairs as homogeneous (sources, destinations, edge type IDs)."""

    def __init__(self, g, sampler):
        self._g, self._sampler, self._book = g, sampler, g.get_partition_book()
        self._etype_ids = {c: i for i, c in enumerate(g.canonical_etypes)}

    def __call__(self, eids):
        g, book = self._g, self._book
        drawn = self._sampler(g, _by_etype(g, eids))
        if not isinstance(drawn, dict):
            raise TypeError(f"negative sampler {self._sampler!r}: on a typed graph it is given {{etype: edge IDs}} "
                            f"and returns {{etype: (sources, destinations)}}, not {type(drawn).__name__}")
        src, dst, etypes = [], [], []
        for key, pair in drawn.items():
            c = g.to_canonical_etype(key)  # KeyError naming an unknown type
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"negative sampler {self._sampler!r}: for {c} it returns (sources, destinations)")
            u, v = (torch.as_tensor(x, dtype=torch.int64).flatten() for x in pair)
            if len(u) != len(v):
                raise ValueError(f"negative sampler {self._sampler!r}: {len(u)} sources but {len(v)} destinations "
                                 f"for {c}")
            for ids, ntype, end in ((u, c[0], "sources"), (v, c[2], "destinations")):
                n = g.num_nodes(ntype)
                if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
                    bad = int(ids[(ids < 0) | (ids >= n)][0])
                    raise IndexError(f"negative sampler {self._sampler!r}: {end} of {c} hold node {bad}, outside "
                                     f"0..{n - 1} of type {ntype!r}")
            src.append(book.map_to_homo_nid(u, c[0]))
            dst.append(book.map_to_homo_nid(v, c[2]))
            etypes.append(torch.full((len(u),), self._etype_ids[c], dtype=torch.int64))
        empty = torch.zeros(0, dtype=torch.int64)
        return tuple(torch.cat(x) if x else empty for x in (src, dst, etypes))


def _exclusion(g, eids, exclude, reverse_eids, reverse_etypes, typed):
    """(the C++ loader's exclude name, reverse edge IDs, {etype ID: reverse etype ID}, the callable it calls or
    None) for DGL's `exclude` argument, checked; `eids` are the loader's homogeneous edge IDs."""
    empty = torch.zeros(0, dtype=torch.int64)
    if callable(exclude):
        return "callback", empty, {}, (_TypedExclusion(g, exclude) if typed else exclude)
    if exclude not in _EXCLUDE:
        raise ValueError(f"exclude must be None, 'self', 'reverse_id', 'reverse_types', 'reverse' or a function "
                         f"of the batch's edge IDs, not {exclude!r}")
    if exclude is None:
        return "", empty, {}, None
    if exclude in ("self", "reverse"):
        return exclude, empty, {}, None
    if exclude == "reverse_types":
        if not typed:
            raise ValueError(f"exclude='reverse_types' (with reverse_etypes={reverse_etypes!r}) pairs edge types; "
                             f"this graph has one edge type: give exclude='reverse_id' with reverse_eids")
        if not isinstance(reverse_etypes, dict) or not reverse_etypes:
            raise ValueError("exclude='reverse_types' needs reverse_etypes, {etype: its reverse edge type}")
        ids = {t: i for i, t in enumerate(g.canonical_etypes)}
        pairs = {}
        for a, b in reverse_etypes.items():
            ca, cb = g.to_canonical_etype(a), g.to_canonical_etype(b)  # KeyError naming an unknown type
            if (ca[0], ca[2]) != (cb[2], cb[0]):
                raise ValueError(f"reverse_etypes: {cb} cannot be the reverse of {ca} (its ends are not {ca}'s "
                                 f"turned around)")
            pairs[ids[ca]] = ids[cb]
        return "reverse_types", empty, pairs, None
    if reverse_eids is None:
        raise ValueError("exclude='reverse_id' needs reverse_eids (reverse_eids[e]: the ID of edge e's reverse)")
    if typed:
        return "reverse_id", _typed_reverse_eids(g, eids, reverse_eids), {}, None
    reverse = to_ids(reverse_eids, "reverse_eids").to(torch.int64)
    if len(reverse) != g.num_edges():
        raise ValueError(f"reverse_eids has {len(reverse)} entries; the graph has {g.num_edges()} edges")
    _check_range(reverse, g.num_edges(), "reverse_eids")
    return "reverse_id", reverse, {}, None


def _typed_reverse_eids(g, eids, reverse_eids):
    """DGL's reverse_eids of a typed graph, {etype: reverse_eids[e], the type-local ID of edge e's reverse, an
    edge of the same type}, as one map over homogeneous edge IDs; an edge of a type not in it is its own
    reverse (nothing more is left out), and every type the loader batches must be in it."""
    if not isinstance(reverse_eids, dict):
        raise ValueError("exclude='reverse_id' on a typed graph: reverse_eids is {etype: reverse IDs}, where "
                         "reverse_eids[etype][e] is the type-local ID of edge e's reverse, an edge of the same type "
                         "(for reverses of another type, give exclude='reverse_types' with reverse_etypes)")
    book = g.get_partition_book()
    reverse = torch.arange(g.num_edges(), dtype=torch.int64)
    given = set()
    for key, ids in reverse_eids.items():
        c = g.to_canonical_etype(key)  # KeyError naming an unknown type
        ids = to_ids(ids, f"reverse_eids of {c}").to(torch.int64)
        if len(ids) != g.num_edges(c):
            raise ValueError(f"reverse_eids of {c} has {len(ids)} entries; that type has {g.num_edges(c)} edges")
        _check_range(ids, g.num_edges(c), f"reverse_eids of {c}")
        reverse[book.map_to_homo_eid(torch.arange(len(ids)), c)] = book.map_to_homo_eid(ids, c)
        given.add(c)
    missing = [c for c in _by_etype(g, eids) if c not in given]
    if missing:
        raise ValueError(f"exclude='reverse_id': reverse_eids has no entry for {missing}, whose edges the loader "
                         f"batches")
    return reverse


def _by_etype(g, eids):
    """Homogeneous edge IDs as DGL's typed form, {canonical etype: type-local IDs}, for the types among them."""
    types, local = g.get_partition_book().map_to_per_etype(eids)
    return {c: local[types == r] for r, c in enumerate(g.canonical_etypes) if bool((types == r).any())}


class _TypedExclusion:
    """DGL's callable `exclude` on a typed graph: called with a batch's homogeneous edge IDs, it asks the
    function with {etype: type-local IDs} and returns the {etype: IDs} it gives as homogeneous IDs."""

    def __init__(self, g, fn):
        self._g, self._fn, self._book = g, fn, g.get_partition_book()

    def __call__(self, eids):
        g, book = self._g, self._book
        left_out = self._fn(_by_etype(g, eids))
        if not isinstance(left_out, dict):
            raise TypeError(f"exclude {self._fn!r}: on a typed graph it is given {{etype: edge IDs}} and returns "
                            f"{{etype: edge IDs to leave out}}, not {type(left_out).__name__}")
        parts = [torch.zeros(0, dtype=torch.int64)]
        for key, ids in left_out.items():
            c = g.to_canonical_etype(key)  # KeyError naming an unknown type
            ids = torch.as_tensor(ids, dtype=torch.int64).flatten()
            _check_range(ids, g.num_edges(c), f"exclude {self._fn!r}: edge IDs of {c}")
            parts.append(book.map_to_homo_eid(ids, c))
        return torch.cat(parts)
