"""DistNodeDataLoader: mini-batches of (input_nodes, output_nodes, blocks), sampled by Tessera's C++ sampler
threads (the launcher's --num-samplers) while Python trains on the previous batch.

The samplers also fetch the rows the training loop reads from the partition's node data, so that
`g.ndata['feat'][input_nodes]` and `g.ndata['label'][output_nodes]` cost nothing in the loop: the loader learns
the names from the first batch's reads (or from NeighborSampler's prefetch_node_feats / prefetch_labels) and
hands the prefetched rows to those reads. Only partition data is prefetched: it does not change during training,
so a prefetched row is the row the read would have returned.
"""
import queue
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

from .. import NID, _C
from ..distributed import context
from ..distributed.graph import DistGraph
from ..distributed.tensor import to_ids
from ..graph.block import Block
from ..graph.hetero_block import HeteroBlock


# dgl.dataloading.DataLoader's arguments that choose how DGL's own workers run; Tessera's sampler threads
# replace them, so they are accepted and have no effect.
_DGL_WORKER_ARGUMENTS = {"use_ddp", "persistent_workers", "pin_memory", "use_uva", "use_alternate_streams",
                         "prefetch_factor", "ddp_seed", "use_prefetch_thread"}


def check_loader_arguments(loader, g, batch_size, kwargs, also_accepted=()):
    """What every distributed loader checks first: the graph, the batch size, and no unknown arguments."""
    if not isinstance(g, DistGraph):
        raise TypeError(f"{loader} samples a DistGraph, not {type(g).__name__}")
    unknown = set(kwargs) - _DGL_WORKER_ARGUMENTS - set(also_accepted)
    if unknown:
        raise TypeError(f"{loader} got unexpected arguments {sorted(unknown)}")
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")


class DistNodeDataLoader:
    """DistNodeDataLoader(g, nids, graph_sampler, batch_size=1, shuffle=False, drop_last=False): iterating
    gives (input_nodes, output_nodes, blocks) per mini-batch; len() is the number of batches per epoch.

    Tessera's own arguments: num_samplers (sampler threads; the launcher's --num-samplers by default) and
    cache_remote_features (default 0.25, or TESSERA_CACHE_REMOTE_FEATURES): the fraction of other machines' nodes, those of largest in-degree,
    whose rows of the prefetched feature this process keeps, shared by its loaders, as `tessera train sage
    --cache-remote-features` does; 0 pulls every remote row every time, as DistDGL does. Only partition data is
    cached (it is read-only, so the copy is exact), once the loader knows which feature the loop reads."""

    def __init__(self, g, nids, graph_sampler, device=None, batch_size=1, shuffle=False, drop_last=False,
                 num_workers=0, num_samplers=None, cache_remote_features=None, **kwargs):
        check_loader_arguments("DistNodeDataLoader", g, batch_size, kwargs, {"collate_fn"})
        self._cache_fraction = context.cache_fraction(cache_remote_features)
        info = context.ensure_initialized()
        self._g = g
        self._info = info
        self._device = torch.device(device) if device is not None else None
        book = g.get_partition_book()
        samplers = info["num_samplers"] if num_samplers is None else int(num_samplers)
        seed = int(torch.randint(0, 2 ** 62, (1,)))  # torch.manual_seed decides the shuffle, as in DGL
        if isinstance(nids, dict):
            # {ntype: type-local IDs}: heterogeneous blocks, and output nodes by type.
            if not nids:
                raise ValueError("DistNodeDataLoader: nids is an empty dict; give {ntype: IDs}")
            self._seed_ntypes = list(nids)
            seeds = torch.cat([book.map_to_homo_nid(to_ids(ids, f"DistNodeDataLoader nids[{nt!r}]"), nt)
                               for nt, ids in nids.items()])
        else:
            # One node type: its IDs. Several: homogeneous IDs, and blocks in homogeneous form (node and edge
            # types in srcdata[dgl.NTYPE] / edata[dgl.ETYPE], RelGraphConv's input).
            self._seed_ntypes = None
            seeds = to_ids(nids, "DistNodeDataLoader nids").to(torch.int64)
        self._book = book
        self._ntype = info["ntypes"][0] if len(info["ntypes"]) == 1 and self._seed_ntypes is None else None
        self._plan_prefetch(g, graph_sampler, labels=True)
        self._c = context.register_loader(_C.DataLoader(
            graph_sampler.c_sampler(g), seeds, int(batch_size), bool(shuffle), bool(drop_last), samplers, seed,
            seed_ntype=self._seed_ntypes[0] if self._seed_ntypes else ""))
        self._begin()

    def _begin(self):
        """The state a loader's batches start from, once its C++ loader exists (both loaders)."""
        self._epoch = 0
        self._input_reduce = None  # what the samplers aggregate blocks[0]'s input rows by (_aggregate_inputs)
        # The sampler threads' wall and CPU seconds over the batches handed out, sampling blocks and fetching
        # rows: what a step costs outside the training thread, servers aside.
        self.sampler_seconds = {"sample": 0.0, "fetch": 0.0, "sample_cpu": 0.0, "fetch_cpu": 0.0}
        self._start_prefetch()

    def _plan_prefetch(self, g, graph_sampler, labels):
        """Checks and keeps the rows that graph_sampler's prefetch_node_feats / prefetch_labels name (`labels`:
        whether the batches' output nodes are labelled seeds), before the C++ loader exists. Prefetch fills one
        tensor of input rows per batch on a graph of one node type, and one per node type when the seeds are given
        by type (HeteroBlocks); the seeds' labels only when they are of one type."""
        feature, label = graph_sampler.prefetch_node_feats, graph_sampler.prefetch_labels if labels else None
        self._feature = self._label = None
        self._typed_features = {}  # HeteroBlocks: ntype -> the node data its input rows are fetched from
        if self._seed_ntypes is None:
            if self._ntype is None and (feature or label):
                raise ValueError("prefetch_node_feats / prefetch_labels: blocks of a graph with several node types "
                                 "in homogeneous form have no one tensor of input rows; give the seeds by type "
                                 "({ntype: IDs}) or read the rows in the training loop")
            if isinstance(feature, dict) or isinstance(label, dict):
                raise ValueError("prefetch_node_feats / prefetch_labels: a {ntype: name} prefetch needs seeds given "
                                 "by type ({ntype: IDs})")
            self._feature, self._label = feature, label
            return
        ntypes = self._book.ntypes
        if isinstance(feature, dict):
            unknown = [nt for nt in feature if nt not in ntypes]
            if unknown:
                raise KeyError(f"prefetch_node_feats names node types {unknown}, which the graph does not have (it "
                               f"has {ntypes})")
            missing = {nt: f for nt, f in feature.items() if f not in g.nodes[nt].data}
            if missing:
                raise KeyError(f"prefetch_node_feats: node data {missing} is not in the graph")
            self._typed_features = dict(feature)
        elif feature:
            self._typed_features = {nt: feature for nt in ntypes if feature in g.nodes[nt].data}
            if not self._typed_features:
                raise KeyError(f"prefetch_node_feats: no node type has data {feature!r}")
        if label is not None:
            if len(self._seed_ntypes) != 1:
                raise ValueError(f"prefetch_labels: Tessera prefetches the labels of seeds of one type; these seeds "
                                 f"are of types {self._seed_ntypes}")
            if isinstance(label, dict):
                if list(label) != self._seed_ntypes:
                    raise KeyError(f"prefetch_labels names node types {list(label)}; the seeds are of type "
                                   f"{self._seed_ntypes[0]!r}")
                label = label[self._seed_ntypes[0]]
        self._label = label

    def _start_prefetch(self):
        """Hands what _plan_prefetch kept to the C++ loader: per node type with HeteroBlocks, else one tensor."""
        if self._seed_ntypes is not None:
            if self._typed_features or self._label:
                self._set_typed_fetch()
        elif self._feature or self._label:
            self._c.set_fetch(self._feature or "", self._label or "")
            self._use_feature_cache()

    def _use_feature_cache(self):
        """Once the samplers fetch a feature (graph of one node type): the process's cache of its rows."""
        cache = context.loader_feature_cache(self._g, self._ntype, self._feature, self._cache_fraction)
        if cache is not None:
            self._c.add_feature_cache(cache)

    def _set_typed_fetch(self):
        self._c.set_typed_fetch({nt: _C.node_tensor_name(nt, f) for nt, f in self._typed_features.items()},
                                self._label or "")
        for nt, f in self._typed_features.items():  # a cache per node type, as train rgcn's
            cache = context.loader_feature_cache(self._g, nt, f, self._cache_fraction)
            if cache is not None:
                self._c.add_feature_cache(cache)

    def __len__(self):
        return self._c.batches_per_epoch

    def _aggregate_inputs(self, reduce):
        """A first layer asks for blocks[0]'s `reduce` of the input rows: the samplers add it from their next
        batches (the first one asked is kept)."""
        if self._input_reduce is None:
            self._input_reduce = reduce
            self._c.set_input_aggregation(reduce)

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
        if kind == "feature":
            self._use_feature_cache()

    def _learn_typed(self, kind, ntype, ntype_feature):
        """A read of node data `ntype_feature` with the batch's IDs of type `ntype` (HeteroBlocks)."""
        if ntype_feature[0] != ntype:
            return
        if kind == "feature" and ntype not in self._typed_features:
            self._typed_features[ntype] = ntype_feature[1]
        elif kind == "label" and self._label is None:
            self._label = ntype_feature[1]
        else:
            return
        self._set_typed_fetch()

    def __iter__(self):
        for input_nodes, output_nodes, blocks, _ in self._epoch_batches():
            yield input_nodes, output_nodes, blocks

    def _epoch_batches(self):
        """The next epoch's batches from the C++ loader, unpacked (_unpack)."""
        epoch, self._epoch = self._epoch, self._epoch + 1
        for batch in epoch_of(self._c, epoch):
            yield self._unpack(batch)

    def _unpack(self, batch):
        """(input_nodes, output_nodes, blocks, edge pairs or None) of a batch from the C++ loader, with the
        prefetched rows attached to the node tensors the training loop indexes with."""
        seeds, raw_blocks, features, labels, typed, pairs, _, aggregated, seconds = batch
        for key, value in zip(self.sampler_seconds, seconds):
            self.sampler_seconds[key] += value
        if self._seed_ntypes is not None:
            blocks = [HeteroBlock(*b, self._book) for b in raw_blocks]
            input_nodes = blocks[0].srcdata[NID]
            # An edge batch keeps its seeds homogeneous: its pairs index them.
            output_nodes = seeds if pairs is not None else {nt: blocks[-1].dstnodes[nt].data[NID]
                                                            for nt in self._seed_ntypes}
            self._attach_typed(input_nodes, None if pairs is not None else output_nodes, typed, labels)
        else:
            blocks = [_homogeneous_block(*b) for b in raw_blocks]
            input_nodes = blocks[0].srcdata[NID]
            output_nodes = seeds
        if self._ntype is not None:
            input_nodes._tessera_learn = lambda nf: self._learn("feature", nf)
            output_nodes._tessera_learn = lambda nf: self._learn("label", nf)
            if features is not None:
                input_nodes._tessera_rows = {_C.node_tensor_name(self._ntype, self._feature): features}
                blocks[0]._tessera_inputs = PreparedInputs(features, aggregated, self._input_reduce,
                                                           self._aggregate_inputs)
            if labels is not None:
                output_nodes._tessera_rows = {_C.node_tensor_name(self._ntype, self._label): labels}
        if self._device is not None and self._device.type != "cpu":
            blocks = [b.to(self._device) for b in blocks]
        return input_nodes, output_nodes, blocks, pairs

    def _attach_typed(self, input_nodes, output_nodes, typed, labels):
        """HeteroBlocks: each type's prefetched rows on that type's input IDs ({ntype id: (positions, rows)}
        from C++, in the order of the type's sources), the labels on the seeds' IDs, and learners on both."""
        for nt, ids in input_nodes.items():
            ids._tessera_learn = lambda nf, nt=nt: self._learn_typed("feature", nt, nf)
        for t, (_, rows) in typed.items():
            nt = self._book.ntypes[t]
            input_nodes[nt]._tessera_rows = {_C.node_tensor_name(nt, self._typed_features[nt]): rows}
        if output_nodes is None or len(self._seed_ntypes) != 1:
            return
        nt = self._seed_ntypes[0]
        output_nodes[nt]._tessera_learn = lambda nf: self._learn_typed("label", nt, nf)
        if labels is not None:
            output_nodes[nt]._tessera_rows = {_C.node_tensor_name(nt, self._label): labels}


class PreparedInputs:
    """blocks[0]'s input rows as the loader fetched them (`rows`, what the loop reads of the node data), and the
    block's reduction of them when the samplers did one as they copied the rows; a layer that could use a
    reduction the batch lacks asks the loader for it, and gets it from the batches sampled after."""

    def __init__(self, rows, aggregated, reduce, ask):
        self.rows = rows
        self._aggregated, self._reduce, self._ask = aggregated, reduce, ask

    def aggregated(self, reduce):
        """The rows' `reduce` ("mean" or "gcn") over the block's in-edges, or None (then asked for)."""
        if self._aggregated is not None and reduce == self._reduce:
            return self._aggregated
        self._ask(reduce)
        return None


def epoch_of(c_loader, epoch):
    """Epoch `epoch` of a C++ loader (_C.DataLoader): its raw batches, in order."""
    c_loader.start_epoch(epoch)
    while True:
        batch = c_loader.next()
        if batch is None:
            return
        yield batch


def _homogeneous_block(num_dst, src_nodes, indptr, indices, eids, etypes, src_ntypes):
    """A Block from the C++ sampler's arrays; with several types, in homogeneous form."""
    type_data = None
    if etypes is not None or src_ntypes is not None:
        type_data = (torch.zeros(len(src_nodes), dtype=torch.int64) if src_ntypes is None else src_ntypes.long(),
                     torch.zeros(len(indices), dtype=torch.int64) if etypes is None else etypes.long())
    return Block(num_dst, src_nodes, indptr, indices, eids, type_data=type_data)


class DistDataLoader:
    """DGL's generic DistDataLoader(dataset, batch_size, shuffle=False, collate_fn=None, drop_last=False): batches
    of `dataset`'s items passed through collate_fn (such as a sampler's sample_blocks).

    collate_fn runs on a thread of its own, `queue_size` batches (default 2) ahead of the training loop, as DGL's
    sampler processes run it: Tessera's graph services release the GIL while they sample, so sampling overlaps
    training. The batch order is fixed by torch's random state when an epoch starts."""

    def __init__(self, dataset, batch_size, shuffle=False, collate_fn=None, drop_last=False, queue_size=None):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        if queue_size is not None and int(queue_size) < 0:
            raise ValueError(f"queue_size must be 0 or more, not {queue_size}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.collate_fn = collate_fn or (lambda x: x)
        self.drop_last = drop_last
        self.queue_size = 2 if queue_size is None else int(queue_size)

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size

    def _items(self, order, b):
        idx = order[b * self.batch_size:(b + 1) * self.batch_size]
        if isinstance(self.dataset, torch.Tensor):
            return self.dataset[idx]
        if hasattr(self.dataset, "__array__") and not isinstance(self.dataset, (list, tuple)):
            return self.dataset[idx.numpy()]
        return [self.dataset[int(i)] for i in idx]

    def __iter__(self):
        n = len(self.dataset)
        order = torch.randperm(n) if self.shuffle else torch.arange(n)
        batches = (self.collate_fn(self._items(order, b)) for b in range(len(self)))
        if self.queue_size == 0:
            yield from batches
            return
        yield from ahead(batches, self.queue_size)


# The threads collate functions run on, reused from one epoch and loader to the next: each thread that reaches
# the servers holds a connection of its own (Context::client()), so a thread per epoch would leave one behind
# every epoch. Loops nested in loops each take a thread while they run.
_COLLATE_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="tessera-collate")


def ahead(iterator, depth):
    """The items of `iterator`, produced on a collate thread up to `depth` ahead of the consumer; its exception
    is raised here, in order. Leaving the loop early stops the producer after the item it is on."""
    items = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(entry):
        while not stop.is_set():
            try:
                items.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in iterator:
                if not put((item, None)):
                    return
            put((done, None))
        except BaseException as e:  # noqa: B902 (handed to the consumer)
            put((done, e))

    producer = _COLLATE_THREADS.submit(produce)
    try:
        while True:
            item, error = items.get()
            if item is done:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        producer.result()
