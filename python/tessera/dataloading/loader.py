"""DistNodeDataLoader: mini-batches of (input_nodes, output_nodes, blocks), sampled by Tessera's C++ sampler
threads (the launcher's --num-samplers) while Python trains on the previous batch.

The samplers also fetch the rows the training loop reads from the partition's node data, so that
`g.ndata['feat'][input_nodes]` and `g.ndata['label'][output_nodes]` cost nothing in the loop: the loader learns
the names from the first batch's reads (or from NeighborSampler's prefetch_node_feats / prefetch_labels) and
hands the prefetched rows to those reads. Only partition data is prefetched: it does not change during training,
so a prefetched row is the row the read would have returned.
"""
import torch

from .. import NID, _C
from ..distributed import context
from ..distributed.graph import DistGraph
from ..distributed.tensor import to_ids
from .block import Block


class DistNodeDataLoader:
    """DistNodeDataLoader(g, nids, graph_sampler, batch_size=1, shuffle=False, drop_last=False): iterating
    gives (input_nodes, output_nodes, blocks) per mini-batch; len() is the number of batches per epoch."""

    def __init__(self, g, nids, graph_sampler, device=None, batch_size=1, shuffle=False, drop_last=False,
                 num_workers=0, num_samplers=None, **kwargs):
        if not isinstance(g, DistGraph):
            raise TypeError(f"DistNodeDataLoader samples a DistGraph, not {type(g).__name__}")
        unknown = set(kwargs) - {"use_ddp", "persistent_workers", "pin_memory", "use_uva", "use_alternate_streams",
                                 "collate_fn", "prefetch_factor", "ddp_seed", "use_prefetch_thread"}
        if unknown:
            raise TypeError(f"DistNodeDataLoader got unexpected arguments {sorted(unknown)}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        info = context.ensure_initialized()
        self._g = g
        self._info = info
        self._device = torch.device(device) if device is not None else None
        if isinstance(nids, dict):
            raise NotImplementedError("DistNodeDataLoader over a heterogeneous graph's typed seeds is not "
                                      "available from Python yet; `tessera train rgcn` trains R-GCN")
        if len(info["ntypes"]) != 1:
            raise NotImplementedError("DistNodeDataLoader over a graph with several node types is not available "
                                      "from Python yet")
        seeds = to_ids(nids, "DistNodeDataLoader nids").to(torch.int64)
        self._ntype = info["ntypes"][0]
        samplers = info["num_samplers"] if num_samplers is None else int(num_samplers)
        seed = int(torch.randint(0, 2 ** 62, (1,)))  # torch.manual_seed decides the shuffle, as in DGL
        self._c = _C.DataLoader(graph_sampler.c_sampler(), seeds, int(batch_size), bool(shuffle), bool(drop_last),
                                samplers, seed)
        self._epoch = 0
        self._feature = graph_sampler.prefetch_node_feats
        self._label = graph_sampler.prefetch_labels
        if self._feature or self._label:
            self._c.set_fetch(self._feature or "", self._label or "")

    def __len__(self):
        return self._c.batches_per_epoch

    def _learn(self, kind, ntype_feature):
        ntype, feature = ntype_feature
        if ntype != self._ntype:
            return
        if kind == "feature" and self._feature is None:
            self._feature = feature
        elif kind == "label" and self._label is None:
            self._label = feature
        else:
            return
        self._c.set_fetch(self._feature or "", self._label or "")

    def __iter__(self):
        self._c.start_epoch(self._epoch)
        self._epoch += 1
        learn_feature = lambda nf: self._learn("feature", nf)  # noqa: E731
        learn_label = lambda nf: self._learn("label", nf)  # noqa: E731
        while True:
            batch = self._c.next()
            if batch is None:
                return
            seeds, raw_blocks, features, labels, _ = batch
            blocks = [Block(*b) for b in raw_blocks]
            input_nodes = blocks[0].srcdata[NID]
            output_nodes = seeds
            input_nodes._tessera_learn = learn_feature
            output_nodes._tessera_learn = learn_label
            if features is not None:
                input_nodes._tessera_rows = {_C.node_tensor_name(self._ntype, self._feature): features}
            if labels is not None:
                output_nodes._tessera_rows = {_C.node_tensor_name(self._ntype, self._label): labels}
            if self._device is not None and self._device.type != "cpu":
                blocks = [b.to(self._device) for b in blocks]
            yield input_nodes, output_nodes, blocks


class DistDataLoader:
    """DGL's generic DistDataLoader(dataset, batch_size, shuffle=False, collate_fn=None, drop_last=False): batches
    of `dataset`'s items passed through collate_fn (such as a sampler's sample_blocks), on this thread."""

    def __init__(self, dataset, batch_size, shuffle=False, collate_fn=None, drop_last=False, queue_size=None):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.collate_fn = collate_fn or (lambda x: x)
        self.drop_last = drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size

    def __iter__(self):
        n = len(self.dataset)
        order = torch.randperm(n) if self.shuffle else torch.arange(n)
        for b in range(len(self)):
            idx = order[b * self.batch_size:(b + 1) * self.batch_size]
            items = self.dataset[idx] if isinstance(self.dataset, torch.Tensor) else [self.dataset[int(i)]
                                                                                      for i in idx]
            yield self.collate_fn(items)
