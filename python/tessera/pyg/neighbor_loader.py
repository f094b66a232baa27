"""DistNeighborLoader: GraphLearn-for-PyTorch's node loader over a Tessera partition, yielding PyG batches.

Each batch is PyG's NeighborLoader output: `Data` with the seeds first (`batch_size` of them), `edge_index` in
local indices (row 0 the source, row 1 the target), `n_id` / `e_id` the nodes' and edges' global IDs, `x` the
node feature and `y` the seeds' labels; on a typed graph, `HeteroData` with per-type `n_id`, `x`, `edge_index`
and `e_id` (type-local IDs), and `batch_size` on the seed type. `num_neighbors[0]` is the seeds' own hop.
"""
import torch

from ..dataloading.loader import DistNodeDataLoader
from ..dataloading.sampler import NeighborSampler
from ..distributed.tensor import to_ids
from ._pyg import pyg_data
from .dataset import DistDataset
from .subgraph import pyg_subgraph


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
    collect_features=True, to_device=None): `data` a DistDataset or DistGraph; len() is the batches per epoch."""

    def __init__(self, data, num_neighbors, input_nodes=None, batch_size=1, shuffle=False, drop_last=False,
                 collect_features=True, to_device=None, with_edge=True, num_samplers=None, **kwargs):
        self._pyg = pyg_data()
        unknown = set(kwargs) - {"worker_options", "edge_dir", "with_weight"}
        if unknown:
            raise TypeError(f"DistNeighborLoader got unexpected arguments {sorted(unknown)}")
        self.data = DistDataset.of(data)
        g = self.data.graph
        self._g = g
        self._typed = typed(g)
        self._device = torch.device(to_device) if to_device is not None else None
        seeds = seed_nodes(g, input_nodes)
        self._seed_type = next(iter(seeds)) if isinstance(seeds, dict) else None
        self._feature = self._present(self.data.feature_name) if collect_features else None
        self._label = self._present(self.data.label_name) if collect_features else None
        prefetch = not self._typed
        sampler = NeighborSampler(fanouts(g, num_neighbors),
                                  prefetch_node_feats=self._feature if prefetch else None,
                                  prefetch_labels=self._label if prefetch else None)
        self._loader = DistNodeDataLoader(g, seeds, sampler, batch_size=batch_size, shuffle=shuffle,
                                          drop_last=drop_last, num_samplers=num_samplers)

    def _present(self, name):
        """`name` where some node type holds it, else None (x / y are then left out)."""
        g = self._g
        if not self._typed:
            return name if name in g.ndata else None
        return name if any(name in g.nodes[nt].data for nt in g.ntypes) else None

    def __len__(self):
        return len(self._loader)

    def __iter__(self):
        for input_nodes, output_nodes, blocks, _ in self._loader._epoch_batches():
            batch = self._hetero(output_nodes, blocks) if self._typed else self._homo(input_nodes, output_nodes,
                                                                                        blocks)
            yield batch.to(self._device) if self._device is not None else batch

    def _homo(self, input_nodes, output_nodes, blocks):
        sub = pyg_subgraph(blocks)
        data = self._pyg.Data(edge_index=torch.stack([sub.src, sub.dst]), num_nodes=len(sub.nodes))
        data.n_id, data.e_id, data.batch_size = sub.nodes, sub.eids, sub.num_seeds
        if self._feature is not None:  # the sampler threads fetched these rows
            data.x = self._g.ndata[self._feature][input_nodes][sub.kept]
        if self._label is not None:
            data.y = self._g.ndata[self._label][output_nodes]
        return data

    def _hetero(self, output_nodes, blocks):
        g, book = self._g, self._g.get_partition_book()
        sub = pyg_subgraph(blocks)
        types, local = book.map_to_per_ntype(sub.nodes)
        rank = torch.empty(len(sub.nodes), dtype=torch.int64)  # a node's index among those of its type
        data = self._pyg.HeteroData()
        for t, nt in enumerate(g.ntypes):
            mine = types == t
            rank[mine] = torch.arange(int(mine.sum()))
            store = data[nt]
            store.n_id = local[mine]
            store.num_nodes = int(mine.sum())
            if self._feature is not None and self._feature in g.nodes[nt].data:
                store.x = g.nodes[nt].data[self._feature][local[mine]]
        edge_types, edge_local = book.map_to_per_etype(sub.eids)
        for r, c in enumerate(g.canonical_etypes):
            mine = edge_types == r
            data[c].edge_index = torch.stack([rank[sub.src[mine]], rank[sub.dst[mine]]])
            data[c].e_id = edge_local[mine]
        seeds = data[self._seed_type]
        seeds.batch_size = sub.num_seeds
        if self._label is not None and self._label in g.nodes[self._seed_type].data:
            seeds.y = g.nodes[self._seed_type].data[self._label][seeds.n_id[: sub.num_seeds]]
        return data
