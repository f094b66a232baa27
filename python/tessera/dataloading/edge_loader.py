"""DistEdgeDataLoader: edge mini-batches for link prediction, (input_nodes, pair_graph, neg_pair_graph, blocks)
per batch. Tessera's C++ sampler threads find the batch's edges, draw their negatives, and sample the blocks of
the pairs' nodes with the batch's edges (and their reverses) left out, ahead of the training loop; node features
the loop reads are prefetched as DistNodeDataLoader does."""
import torch

from .. import NID, _C
from ..distributed import context
from ..distributed.tensor import to_ids
from .graph import Graph
from .loader import DistNodeDataLoader, check_loader_arguments

_EXCLUDE = (None, "self", "reverse_id", "reverse_types")


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
    out of the blocks."""

    def __init__(self, g, eids, graph_sampler, device=None, batch_size=1, shuffle=False, drop_last=False,
                 exclude=None, reverse_eids=None, reverse_etypes=None, negative_sampler=None, num_samplers=None,
                 **kwargs):
        if isinstance(graph_sampler, EdgePredictionSampler):
            exclude = graph_sampler.exclude if exclude is None else exclude
            reverse_eids = graph_sampler.reverse_eids if reverse_eids is None else reverse_eids
            reverse_etypes = graph_sampler.reverse_etypes if reverse_etypes is None else reverse_etypes
            negative_sampler = graph_sampler.negative_sampler if negative_sampler is None else negative_sampler
            graph_sampler = graph_sampler.sampler
        check_loader_arguments("DistEdgeDataLoader", g, batch_size, kwargs, {"num_workers"})
        info = context.ensure_initialized()
        if len(g.canonical_etypes) != 1:
            raise ValueError(f"DistEdgeDataLoader: this graph has {len(g.canonical_etypes)} edge types; Tessera's "
                             f"edge loader samples graphs of one edge type")
        if isinstance(eids, dict):
            if len(eids) != 1:
                raise ValueError(f"eids: this graph has one edge type; give its IDs, not {len(eids)} types")
            etype, eids = next(iter(eids.items()))
            if g.to_canonical_etype(etype) != g.canonical_etypes[0]:
                raise KeyError(f"eids: unknown edge type {etype!r} (the graph has {g.canonical_etypes})")
        eids = to_ids(eids, "DistEdgeDataLoader eids").to(torch.int64)
        _check_range(eids, g.num_edges(), "DistEdgeDataLoader eids")
        exclude_name, reverse = _exclusion(g, exclude, reverse_eids, reverse_etypes)
        negatives = "" if negative_sampler is None else getattr(negative_sampler, "mode", None)
        if negatives is None:
            raise TypeError(f"negative_sampler: give Uniform(k), PerSourceUniform(k) or GlobalUniform(k), not "
                            f"{negative_sampler!r}")
        self._g, self._info, self._book = g, info, g.get_partition_book()
        self._device = torch.device(device) if device is not None else None
        self._seed_ntypes = None
        self._ntype = info["ntypes"][0] if len(info["ntypes"]) == 1 else None
        self._negative = negative_sampler is not None
        samplers = info["num_samplers"] if num_samplers is None else int(num_samplers)
        seed = int(torch.randint(0, 2 ** 62, (1,)))
        self._c = _C.DataLoader.for_edges(
            graph_sampler.c_sampler(), eids, int(batch_size), bool(shuffle), bool(drop_last), samplers, seed,
            negatives, getattr(negative_sampler, "k", 0), getattr(negative_sampler, "exclude_self_loops", True),
            getattr(negative_sampler, "replace", False), exclude_name, reverse,
            exclude if callable(exclude) else None)
        self._epoch = 0
        self._feature = graph_sampler.prefetch_node_feats
        self._label = None
        if self._feature:
            self._c.set_fetch(self._feature, "")

    def __iter__(self):
        for input_nodes, seeds, blocks, pairs in self._epoch_batches():
            eids, src, dst, neg_src, neg_dst = pairs
            pair_graph = Graph(src, dst, len(seeds), eids=eids)
            pair_graph.ndata[NID] = seeds
            if self._device is not None:
                pair_graph = pair_graph.to(self._device)
            if not self._negative:
                yield input_nodes, pair_graph, blocks
                continue
            neg_pair_graph = Graph(neg_src, neg_dst, len(seeds))
            neg_pair_graph.ndata[NID] = seeds
            if self._device is not None:
                neg_pair_graph = neg_pair_graph.to(self._device)
            yield input_nodes, pair_graph, neg_pair_graph, blocks


EdgeDataLoader = DistEdgeDataLoader


def _check_range(ids, bound, what):
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= bound):
        bad = ids[(ids < 0) | (ids >= bound)][0]
        raise IndexError(f"{what}: edge {int(bad)} is outside 0..{bound - 1}")


def _exclusion(g, exclude, reverse_eids, reverse_etypes):
    """(the C++ loader's exclude name, reverse edge IDs) for DGL's `exclude` argument, checked."""
    empty = torch.zeros(0, dtype=torch.int64)
    if callable(exclude):
        return "callback", empty
    if exclude not in _EXCLUDE:
        raise ValueError(f"exclude must be None, 'self', 'reverse_id', 'reverse_types' or a function of the "
                         f"batch's edge IDs, not {exclude!r}")
    if exclude is None:
        return "", empty
    if exclude == "self":
        return "self", empty
    if exclude == "reverse_types":
        raise ValueError(f"exclude='reverse_types' (with reverse_etypes={reverse_etypes!r}) pairs edge types; this "
                         f"graph has one edge type: give exclude='reverse_id' with reverse_eids")
    if reverse_eids is None:
        raise ValueError("exclude='reverse_id' needs reverse_eids (reverse_eids[e]: the ID of edge e's reverse)")
    reverse = to_ids(reverse_eids, "reverse_eids").to(torch.int64)
    if len(reverse) != g.num_edges():
        raise ValueError(f"reverse_eids has {len(reverse)} entries; the graph has {g.num_edges()} edges")
    _check_range(reverse, g.num_edges(), "reverse_eids")
    return "reverse_id", reverse
