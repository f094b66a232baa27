"""DistLinkNeighborLoader: GraphLearn-for-PyTorch's (and PyG's LinkNeighborLoader's) link loader over a Tessera
partition, on Tessera's edge mini-batches: the C++ sampler threads find each batch's edges, draw the negatives,
and sample the pairs' neighbourhoods ahead of the loop.

A batch is PyG's `Data`: the subgraph (`n_id`, `e_id`, `x`, `edge_index`, as DistNeighborLoader lays it out,
the pairs' nodes first) and the supervision, in local indices: with neg_sampling="binary", `edge_label_index`
(the batch's pairs, then the negative pairs) and `edge_label` (1s, or the pairs' edge_label shifted so that 0
is negative as PyG shifts it, then 0s); with "triplet", `src_index`, `dst_pos_index` and `dst_neg_index`
([batch, amount], or [batch] when amount is 1); `input_id` holds the batch's indices into edge_label_index
(or, without it, the batch's edge IDs).
"""
import math

import torch

from ..dataloading import negative_sampler
from ..dataloading.edge_loader import DistEdgeDataLoader
from ..dataloading.sampler import NeighborSampler
from ._pyg import pyg_data
from .dataset import DistDataset
from .neighbor_loader import fanouts, typed
from .subgraph import positions_of, pyg_subgraph


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
    given. exclude (Tessera's argument for the graph's own edges; PyG excludes nothing): None, "self" (the
    batch's edges leave its subgraph) or "reverse" (and their reverses)."""

    def __init__(self, data, num_neighbors, edge_label_index=None, edge_label=None, neg_sampling=None,
                 neg_sampling_ratio=None, batch_size=1, shuffle=False, drop_last=False, collect_features=True,
                 to_device=None, exclude=None, edge_ids=None, num_samplers=None, **kwargs):
        self._pyg = pyg_data()
        unknown = set(kwargs) - {"worker_options", "edge_dir", "with_weight"}
        if unknown:
            raise TypeError(f"DistLinkNeighborLoader got unexpected arguments {sorted(unknown)}")
        self.data = DistDataset.of(data)
        g = self.data.graph
        if typed(g):
            raise ValueError("DistLinkNeighborLoader samples a graph of one node and edge type; for a typed graph use "
                             "tessera.dgl's DistEdgeDataLoader with {etype: edge IDs}")
        self._mode, self._amount = _negatives(neg_sampling, neg_sampling_ratio)
        pairs = _pairs(g, edge_label_index, edge_ids, exclude)
        if pairs is not None:
            eids = torch.arange(pairs[0].numel())
        else:
            eids = torch.arange(g.num_edges()) if edge_ids is None else edge_ids
        if edge_label is not None and edge_ids is not None:
            raise ValueError("edge_label with edge_ids: give the labelled pairs as edge_label_index, or label every "
                             "edge of the graph (edge_ids None)")
        self._labels = _labels(edge_label, len(eids), self._mode)  # indexed by the batch's input_id
        self._g = g
        self._device = torch.device(to_device) if to_device is not None else None
        self._feature = self.data.feature_name if collect_features and self.data.feature_name in g.ndata else None
        if self._mode == "binary":
            sampler = negative_sampler.GlobalUniform(max(1, math.ceil(self._amount)), exclude_self_loops=False,
                                                     replace=True)
        elif self._mode == "triplet":
            sampler = negative_sampler.Uniform(int(self._amount))
        else:
            sampler = None
        self._loader = DistEdgeDataLoader(g, eids, NeighborSampler(fanouts(g, num_neighbors),
                                                                   prefetch_node_feats=self._feature),
                                          batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                                          exclude=exclude, negative_sampler=sampler, num_samplers=num_samplers,
                                          _pairs=pairs)

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
        data = self._pyg.Data(edge_index=torch.stack([sub.src, sub.dst]), num_nodes=len(sub.nodes))
        data.n_id, data.e_id = sub.nodes, sub.eids
        data.num_sampled_nodes, data.num_sampled_edges = sub.nodes_per_hop, sub.edges_per_hop
        if self._feature is not None:  # the sampler threads fetched the blocks' input rows
            data.x = self._g.ndata[self._feature][input_nodes][positions_of(input_nodes, sub.nodes)]
        src, dst = pair.edges()  # positions among the pairs' nodes: the subgraph's first nodes
        data.input_id = pair.edata["_ID"]
        if self._mode == "triplet":
            _, neg_dst = neg.edges()
            data.src_index, data.dst_pos_index = src, dst
            k = int(self._amount)
            data.dst_neg_index = neg_dst.view(-1, k) if k > 1 else neg_dst
        else:
            labels = torch.ones(len(src)) if self._labels is None else self._labels[data.input_id]
            if self._mode == "binary":
                nu, nv = neg.edges()
                wanted = math.ceil(self._amount * len(src))
                nu, nv = nu[:wanted], nv[:wanted]
                src, dst = torch.cat([src, nu]), torch.cat([dst, nv])
                labels = torch.cat([labels, labels.new_zeros((len(nu),) + tuple(labels.shape[1:]))])
            data.edge_label_index = torch.stack([src, dst])
            data.edge_label = labels
        return data


def _pairs(g, edge_label_index, edge_ids, exclude):
    """PyG's edge_label_index as (sources, destinations) node IDs, checked, or None to batch the graph's edges."""
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
    n = g.num_nodes()
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= n):
        bad = int(index[(index < 0) | (index >= n)][0])
        raise IndexError(f"edge_label_index: node {bad} is outside 0..{n - 1}")
    return index[0].contiguous(), index[1].contiguous()


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
