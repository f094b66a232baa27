"""DistNeighborLoader: GraphLearn-for-PyTorch's node loader over a Tessera partition, yielding PyG batches.

Each batch is PyG's NeighborLoader output: `Data` with the seeds first (`batch_size` of them), `edge_index` in
local indices (row 0 the source, row 1 the target), `n_id` / `e_id` the nodes' and edges' global IDs, `x` the
node feature and `y` the seeds' labels; on a typed graph, `HeteroData` with per-type `n_id`, `x`, `edge_index`
and `e_id` (type-local IDs), and `batch_size` on the seed type. `num_neighbors[0]` is the seeds' own hop.
"""
import torch

from .. import _C
from ..dataloading.loader import epoch_of
from ..dataloading.sampler import NeighborSampler
from ..distributed import context
from ..distributed.tensor import to_ids
from ._pyg import pyg_data
from .dataset import DistDataset
from .subgraph import Subgraph, hetero_data


def typed(g):
    return len(g.ntypes) > 1 or len(g.canonical_etypes) > 1


def fanouts(g, num_neighbors):
    """PyG's num_neighbors (seeds' hop first; a list, or {etype: list} on a typed graph) as the C++ sampler's
    per-layer fanouts (input layer first), per edge type on a typed graph."""
    if isinstance(num_neighbors, dict):
        if not typed(g):
            raise ValueError("num_neighbors: a {edge type: list} fan-out needs a graph of several edge types")
        given = {}
        for k, v in num_neighbors.items():
            try:
                given[g.to_canonical_etype(k)] = [int(x) for x in v]
            except KeyError:
                raise KeyError(f"num_neighbors names edge type {k!r}, which is not in the graph (it has "
                               f"{g.canonical_etypes})") from None
        missing = [c for c in g.canonical_etypes if c not in given]
        if missing:
            raise KeyError(f"num_neighbors has no fan-out for edge types {missing}")
        lengths = {len(v) for v in given.values()}
        if len(lengths) != 1:
            raise ValueError(f"num_neighbors: every edge type needs a fan-out for each hop; the lists have lengths "
                             f"{sorted(lengths)}")
        hops = []
        for h in range(lengths.pop()):
            counts = {v[h] for v in given.values()}
            if len(counts) != 1:
                raise ValueError(f"num_neighbors: hop {h} asks for {sorted(counts)} neighbours by edge type; Tessera "
                                 f"samples the same number from every edge type of a hop")
            hops.append(counts.pop())
        per_type = True
    else:
        hops = [int(x) for x in num_neighbors]
        per_type = typed(g)  # PyG samples a list's count from each edge type of a typed graph
    if not hops:
        raise ValueError("num_neighbors: give at least one hop")
    layers = list(reversed(hops))
    return [{c: n for c in g.canonical_etypes} for n in layers] if per_type else layers


def seed_nodes(g, input_nodes):
    """The loader's seeds: IDs (or a bool mask) on a graph of one node type; (ntype, IDs or None) or an ntype
    on a typed one ({ntype: IDs} for the node loader)."""
    if typed(g):
        if isinstance(input_nodes, str):
            input_nodes = (input_nodes, None)
        if not (isinstance(input_nodes, tuple) and len(input_nodes) == 2):
            raise ValueError(f"input_nodes: this graph has node types {g.ntypes}; give (ntype, IDs) or an ntype")
        ntype, ids = input_nodes
        if ntype not in g.ntypes:
            raise KeyError(f"input_nodes: node type {ntype!r} is not in the graph (it has {g.ntypes})")
        n = g.num_nodes(ntype)
        ids = torch.arange(n) if ids is None else _ids(ids, n, f"input_nodes of {ntype!r}")
        return {ntype: ids}
    n = g.num_nodes()
    return torch.arange(n) if input_nodes is None else _ids(input_nodes, n, "input_nodes")


def _ids(ids, n, what):
    ids = torch.as_tensor(ids)
    if ids.dtype == torch.bool:
        if len(ids) != n:
            raise ValueError(f"{what}: a mask needs {n} entries, not {len(ids)}")
        return torch.nonzero(ids).flatten()
    ids = to_ids(ids, what).to(torch.int64)
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
        bad = ids[(ids < 0) | (ids >= n)][0]
        raise IndexError(f"{what}: node {int(bad)} is outside 0..{n - 1}")
    return ids


class DistNeighborLoader:
    """DistNeighborLoader(data, num_neighbors, input_nodes=None, batch_size=1, shuffle=False, drop_last=False,
    collect_features=True, to_device=None): `data` a DistDataset or DistGraph; len() is the batches per epoch.
    The sampler threads lay each batch out as PyG's subgraph and fetch its nodes' feature rows and its seeds'
    labels, ahead of the loop; cache_remote_features is tessera.dataloading.DistNodeDataLoader's (each node type
    with the feature keeps that fraction of other machines' rows of it in this process)."""

    def __init__(self, data, num_neighbors, input_nodes=None, batch_size=1, shuffle=False, drop_last=False,
                 collect_features=True, to_device=None, with_edge=True, num_samplers=None, cache_remote_features=None,
                 **kwargs):
        self._pyg = pyg_data()
        unknown = set(kwargs) - {"worker_options", "edge_dir", "with_weight"}
        if unknown:
            raise TypeError(f"DistNeighborLoader got unexpected arguments {sorted(unknown)}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        fraction = context.cache_fraction(cache_remote_features)
        self.data = DistDataset.of(data)
        g = self.data.graph
        info = context.ensure_initialized()
        self._g, self._book = g, g.get_partition_book()
        self._typed = typed(g)
        self._device = torch.device(to_device) if to_device is not None else None
        seeds = seed_nodes(g, input_nodes)
        self._seed_type = next(iter(seeds)) if isinstance(seeds, dict) else None
        self._feature = self._present(self.data.feature_name) if collect_features else None
        self._label = self._present(self.data.label_name) if collect_features else None
        if self._typed:
            ids = self._book.map_to_homo_nid(seeds[self._seed_type], self._seed_type)
        else:
            ids = seeds
        sampler = NeighborSampler(fanouts(g, num_neighbors))
        samplers = info["num_samplers"] if num_samplers is None else int(num_samplers)
        self._c = context.register_loader(_C.DataLoader(
            sampler.c_sampler(g), ids, int(batch_size), bool(shuffle), bool(drop_last), samplers,
            int(torch.randint(0, 2 ** 62, (1,))), seed_ntype=self._seed_type or "", pyg_layout=True))
        if self._typed:
            has = [nt for nt in g.ntypes if self._feature is not None and self._feature in g.nodes[nt].data]
            self._c.set_typed_fetch({nt: _C.node_tensor_name(nt, self._feature) for nt in has}, self._label or "")
        else:
            has = g.ntypes[:1]
            self._c.set_fetch(self._feature or "", self._label or "")
        for nt in has:  # a cache per node type with the feature
            cache = context.loader_feature_cache(g, nt, self._feature, fraction)
            if cache is not None:
                self._c.add_feature_cache(cache)
        self._epoch = 0

    def _present(self, name):
        """`name` where some node type holds it, else None (x / y are then left out)."""
        g = self._g
        if not self._typed:
            return name if name in g.ndata else None
        return name if any(name in g.nodes[nt].data for nt in g.ntypes) else None

    def __len__(self):
        return self._c.batches_per_epoch

    def __iter__(self):
        epoch, self._epoch = self._epoch, self._epoch + 1
        for _, _, features, labels, typed_rows, _, layout, *_ in epoch_of(self._c, epoch):
            sub = Subgraph(*layout)
            data = self._hetero(sub, labels, typed_rows) if self._typed else self._homo(sub, features, labels)
            yield data.to(self._device) if self._device is not None else data

    def _homo(self, sub, features, labels):
        data = self._pyg.Data(edge_index=torch.stack([sub.src, sub.dst]), num_nodes=len(sub.nodes))
        data.n_id, data.e_id, data.batch_size = sub.nodes, sub.eids, sub.num_seeds
        data.num_sampled_nodes, data.num_sampled_edges = sub.nodes_per_hop, sub.edges_per_hop
        if features is not None:
            data.x = features
        if labels is not None:
            data.y = labels
        return data

    def _hetero(self, sub, labels, typed_rows):
        # The sampler threads fetched each type's rows in the order of its nodes in the layout.
        rows = {self._g.ntypes[t]: (None, x) for t, (_, x) in typed_rows.items()}
        data = hetero_data(self._pyg, self._g, sub, self._feature, rows)
        seeds = data[self._seed_type]
        seeds.batch_size = sub.num_seeds
        if labels is not None:
            seeds.y = labels
        return data
