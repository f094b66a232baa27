"""DistLinkNeighborLoader: GraphLearn-for-PyTorch's (and PyG's LinkNeighborLoader's) link loader over a Tessera
partition, on Tessera's edge mini-batches: the C++ sampler threads find each batch's edges, draw the negatives,
and sample the pairs' neighbourhoods ahead of the loop.

A batch is PyG's `Data`: the subgraph (`n_id`, `e_id`, `x`, `edge_index`, as DistNeighborLoader lays it out,
the pairs' nodes first) and the supervision, in local indices: with neg_sampling="binary", `edge_label_index`
(the batch's pairs, then the negative pairs) and `edge_label` (1s, or the pairs' edge_label shifted so that 0
is negative as PyG shifts it, then 0s); with "triplet", `src_index`, `dst_pos_index` and `dst_neg_index`
([batch, amount], or [batch] when amount is 1); `input_id` holds the batch's indices into edge_label_index
(or, without it, the batch's edge IDs).

On a typed graph the batch is PyG's `HeteroData` (per node type `n_id`, `x`; per edge type `edge_index`,
`e_id`), edge_label_index names the supervision edge type (or gives it with [2, n] node pairs of its end
types, type-local IDs), and the supervision attributes sit on that edge type's store (triplets: `src_index`
on its source type's, `dst_pos_index` / `dst_neg_index` on its destination type's), as PyG places them.
"""
import math

import torch

from ..dataloading import negative_sampler
from ..dataloading.edge_loader import DistEdgeDataLoader
from ..dataloading.sampler import NeighborSampler
from ._pyg import pyg_data
from .dataset import DistDataset
from .neighbor_loader import fanouts, typed
from .subgraph import hetero_data, positions_of, pyg_subgraph


def _negatives(neg_sampling, neg_sampling_ratio):
    """(mode, amount) from PyG's neg_sampling ("binary" / "triplet", a dict, or a NegativeSampling object) or
    its older neg_sampling_ratio (binary)."""
    if neg_sampling is None:
        return ("binary", float(neg_sampling_ratio)) if neg_sampling_ratio else (None, 0)
    if isinstance(neg_sampling, str):
        mode, amount = neg_sampling, 1
    elif isinstance(neg_sampling, dict):
        mode, amount = neg_sampling.get("mode"), neg_sampling.get("amount", 1)
    else:
        mode, amount = getattr(neg_sampling, "mode", None), getattr(neg_sampling, "amount", 1)
        mode = getattr(mode, "value", mode)
    if mode not in ("binary", "triplet"):
        raise ValueError(f"neg_sampling: the mode is 'binary' or 'triplet', not {mode!r}")
    if float(amount) <= 0:
        raise ValueError(f"neg_sampling: amount must be positive, not {amount}")
    if mode == "triplet" and float(amount) != int(amount):
        raise ValueError(f"neg_sampling: 'triplet' takes a whole number of negatives per edge, not {amount}")
    return mode, float(amount)


class DistLinkNeighborLoader:
    """DistLinkNeighborLoader(data, num_neighbors, edge_label_index=None, edge_label=None, neg_sampling=None,
    batch_size=1, shuffle=False, drop_last=False, collect_features=True, exclude=None): the supervision pairs
    are edge_label_index ([2, n] node IDs, edges of the graph or not, as PyG's RandomLinkSplit leaves them),
    or the graph's edges (all of them, or those whose IDs `edge_ids` gives), labelled by edge_label when
    given; on a typed graph, edge_label_index is an edge type or (edge type, pairs). exclude (Tessera's
    argument for the graph's own edges; PyG excludes nothing): None, "self" (the batch's edges leave its
    subgraph) or "reverse" (and their reverses). cache_remote_features is DistNeighborLoader's."""

    def __init__(self, data, num_neighbors, edge_label_index=None, edge_label=None, neg_sampling=None,
                 neg_sampling_ratio=None, batch_size=1, shuffle=False, drop_last=False, collect_features=True,
                 to_device=None, exclude=None, edge_ids=None, num_samplers=None, cache_remote_features=None,
                 **kwargs):
        self._pyg = pyg_data()
        unknown = set(kwargs) - {"worker_options", "edge_dir", "with_weight"}
        if unknown:
            raise TypeError(f"DistLinkNeighborLoader got unexpected arguments {sorted(unknown)}")
        self.data = DistDataset.of(data)
        g = self.data.graph
        self._mode, self._amount = _negatives(neg_sampling, neg_sampling_ratio)
        if edge_label is not None and edge_ids is not None:
            raise ValueError("edge_label with edge_ids: give the labelled pairs as edge_label_index, or label every "
                             "edge of the graph (edge_ids None)")
        self._etype, pairs, eids, count = _supervision(g, edge_label_index, edge_ids, exclude)
        self._labels = _labels(edge_label, count, self._mode)  # indexed by the batch's input_id
        self._g = g
        self._device = torch.device(to_device) if to_device is not None else None
        self._feature = None
        if collect_features:
            has = [self.data.feature_name in g.nodes[nt].data for nt in g.ntypes]
            self._feature = self.data.feature_name if any(has) else None
        if self._mode == "binary":
            sampler = negative_sampler.GlobalUniform(max(1, math.ceil(self._amount)), exclude_self_loops=False,
                                                     replace=True)
        elif self._mode == "triplet":
            sampler = negative_sampler.Uniform(int(self._amount))
        else:
            sampler = None
        # The sampler threads prefetch x (per node type on a typed graph).
        self._loader = DistEdgeDataLoader(g, eids, NeighborSampler(fanouts(g, num_neighbors),
                                                                   prefetch_node_feats=self._feature),
                                          batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                                          exclude=exclude, negative_sampler=sampler, num_samplers=num_samplers,
                                          cache_remote_features=cache_remote_features, _pairs=pairs)

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        for item in self._loader:
            input_nodes, pair, blocks = item[0], item[1], item[-1]
            neg = item[2] if len(item) == 4 else None
            batch = self._batch(input_nodes, pair, neg, blocks)
            yield batch.to(self._device) if self._device is not None else batch

    def _batch(self, input_nodes, pair, neg, blocks):
        sub = pyg_subgraph(blocks)
        c = self._etype
        if c is not None:
            rows = {}
            if self._feature is not None:  # prefetched: reading them takes the samplers' rows
                rows = {nt: (ids, self._g.nodes[nt].data[self._feature][ids]) for nt, ids in input_nodes.items()
                        if self._feature in self._g.nodes[nt].data}
            data = hetero_data(self._pyg, self._g, sub, self._feature, rows)
            self._supervise(data[c], data[c[0]], data[c[2]], *pair.edges(etype=c), pair.edges[c].data["_ID"],
                            None if neg is None else neg.edges(etype=c))
            return data
        data = self._pyg.Data(edge_index=torch.stack([sub.src, sub.dst]), num_nodes=len(sub.nodes))
        data.n_id, data.e_id = sub.nodes, sub.eids
        data.num_sampled_nodes, data.num_sampled_edges = sub.nodes_per_hop, sub.edges_per_hop
        if self._feature is not None:  # the sampler threads fetched the blocks' input rows
            data.x = self._g.ndata[self._feature][input_nodes][positions_of(input_nodes, sub.nodes)]
        self._supervise(data, data, data, *pair.edges(), pair.edata["_ID"], None if neg is None else neg.edges())
        return data

    def _supervise(self, edges, sources, destinations, src, dst, input_id, neg_edges):
        """PyG's supervision of a batch: on the supervision edge type's store `edges` (the Data itself on a graph
        of one type) input_id, and edge_label_index / edge_label, or with triplets src_index on the source type's
        store and dst_pos_index / dst_neg_index on the destination type's. src, dst: the pairs' ends, positions
        among their types' nodes, which lead the subgraph."""
        edges.input_id = input_id
        if self._mode == "triplet":
            sources.src_index, destinations.dst_pos_index = src, dst
            k, neg_dst = int(self._amount), neg_edges[1]
            destinations.dst_neg_index = neg_dst.view(-1, k) if k > 1 else neg_dst
            return
        labels = torch.ones(len(src)) if self._labels is None else self._labels[input_id]
        if self._mode == "binary":
            wanted = math.ceil(self._amount * len(src))
            nu, nv = neg_edges[0][:wanted], neg_edges[1][:wanted]
            src, dst = torch.cat([src, nu]), torch.cat([dst, nv])
            labels = torch.cat([labels, labels.new_zeros((len(nu),) + tuple(labels.shape[1:]))])
        edges.edge_label_index = torch.stack([src, dst])
        edges.edge_label = labels


def _supervision(g, edge_label_index, edge_ids, exclude):
    """(the supervision edge type or None on a graph of one type, the node pairs or None, the edge loader's items,
    how many labels edge_label holds): the pairs' indices, or the graph's (or that type's) edges."""
    etype, index = _edge_type(g, edge_label_index) if typed(g) else (None, edge_label_index)
    pairs = _pairs(g, index, edge_ids, exclude, etype)
    if pairs is not None:
        return etype, pairs, torch.arange(pairs[0].numel()), pairs[0].numel()
    count = g.num_edges() if etype is None else g.num_edges(etype)
    items = torch.arange(count) if edge_ids is None else edge_ids
    return etype, None, items if etype is None else {etype: items}, count


def _edge_type(g, edge_label_index):
    """PyG's edge_label_index of a typed graph, an edge type or (edge type, [2, n] node pairs or None), as (the
    canonical edge type, the pairs or None)."""
    form = ("on a typed graph, edge_label_index names the supervision edge type: an edge type, or (edge type, "
            "[2, n] node pairs of its end types)")
    if edge_label_index is None:
        raise ValueError(form)
    if isinstance(edge_label_index, str) or (isinstance(edge_label_index, tuple) and len(edge_label_index) == 3
                                             and all(isinstance(x, str) for x in edge_label_index)):
        return g.to_canonical_etype(edge_label_index), None
    if not isinstance(edge_label_index, (tuple, list)) or len(edge_label_index) != 2:
        raise ValueError(f"{form}, not {type(edge_label_index).__name__}")
    etype, index = edge_label_index
    return g.to_canonical_etype(etype), index  # KeyError naming an unknown type


def _pairs(g, edge_label_index, edge_ids, exclude, etype=None):
    """PyG's edge_label_index as (sources, destinations, edge type ID or -1) in homogeneous node IDs, checked, or
    None to batch the graph's edges. On a typed graph the pairs join `etype`'s end types, in their type-local
    IDs."""
    if edge_label_index is None:
        return None
    if edge_ids is not None:
        raise ValueError("give edge_label_index (node pairs) or edge_ids (the graph's edges), not both")
    if exclude is not None:
        raise ValueError(f"exclude={exclude!r}: the pairs of edge_label_index are not the graph's edges, so none "
                         f"leave the subgraph; remove them from the graph (PyG's RandomLinkSplit does) or give "
                         f"edge_ids")
    index = torch.as_tensor(edge_label_index)
    if index.dim() != 2 or index.shape[0] != 2 or index.dtype.is_floating_point or index.dtype == torch.bool:
        raise ValueError(f"edge_label_index: a [2, n] tensor of node IDs, not {tuple(index.shape)} of {index.dtype}")
    index = index.to(torch.int64)
    ends = ((None, None) if etype is None else (etype[0], etype[2]))
    for row, ntype in zip(index, ends):
        n = g.num_nodes() if ntype is None else g.num_nodes(ntype)
        if row.numel() and (int(row.min()) < 0 or int(row.max()) >= n):
            bad = int(row[(row < 0) | (row >= n)][0])
            of = "" if ntype is None else f" of type {ntype!r}"
            raise IndexError(f"edge_label_index: node {bad} is outside 0..{n - 1}{of}")
    if etype is None:
        return index[0].contiguous(), index[1].contiguous(), -1
    book = g.get_partition_book()
    return (book.map_to_homo_nid(index[0], etype[0]), book.map_to_homo_nid(index[1], etype[2]),
            g.canonical_etypes.index(etype))


def _labels(edge_label, count, mode):
    """PyG's edge_label, one per supervision pair, shifted by 1 for binary negatives when it holds 0 (0 then means
    negative), or None."""
    if edge_label is None:
        return None
    if mode == "triplet":
        raise ValueError("edge_label needs to be None for 'triplet' negative sampling (use the batch's src_index, "
                         "dst_pos_index and dst_neg_index), as in PyG")
    labels = torch.as_tensor(edge_label)
    if labels.dim() == 0 or labels.shape[0] != count:
        raise ValueError(f"edge_label has {labels.shape[0] if labels.dim() else 0} entries for {count} supervision "
                         f"pairs")
    if mode == "binary" and labels.numel() and labels.min() == 0:
        labels = labels + 1
    return labels
