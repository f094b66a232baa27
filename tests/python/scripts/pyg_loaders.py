"""Run by test_pyg.py, standalone or under `tessera launch`: tessera.pyg's loaders yield PyG batches, each checked
against the graph rebuilt by brute force from the partitioner's input and ID maps (features and labels from the
input files). Every check is an assert; trainer 0 prints OK last."""
import os
import sys

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.nn import GraphSAGE

import tessera.dataloading as tload
import tessera.distributed as tdist
import tessera.pyg as tpyg
from checks import input_graph, raises
from tessera.distributed import context

part_config, data_dir = sys.argv[1], sys.argv[2]
tpyg.init_client("ip_config.txt")
dataset = tpyg.DistDataset("small", part_config)
g = dataset.graph

meta, orig_nids, SRC, DST = input_graph(part_config, data_dir)
node_type = meta["node_types"][0]
FEAT = torch.from_numpy(np.load(os.path.join(data_dir, node_type["feat"]))[orig_nids])
LABEL = torch.from_numpy(np.load(os.path.join(data_dir, node_type["label"]))[orig_nids])
N = g.num_nodes()
DEG = torch.bincount(DST, minlength=N)

# DistNeighborLoader: seeds first, real edges in PyG's direction, fan-out per hop, the dataset's x and y.
torch.manual_seed(g.rank())
train = torch.nonzero(g.ndata["train_mask"][torch.arange(N)]).flatten()
mine = tdist.node_split(g.ndata["train_mask"], g.get_partition_book(), force_even=True)
loader = tpyg.DistNeighborLoader(dataset, [4, 3], input_nodes=mine, batch_size=64, shuffle=True)
seen = []
MODEL = GraphSAGE(FEAT.shape[1], 8, 2, out_channels=3).eval()
for batch in loader:
    assert isinstance(batch, Data)
    bs, n_id, (u, v) = batch.batch_size, batch.n_id, batch.edge_index
    seen.append(n_id[:bs])
    assert batch.num_nodes == len(n_id) == len(torch.unique(n_id))
    assert torch.equal(SRC[batch.e_id], n_id[u]) and torch.equal(DST[batch.e_id], n_id[v]), "edge and e_id agree"
    assert len(torch.unique(batch.e_id)) == len(batch.e_id)
    into = torch.bincount(v, minlength=len(n_id))
    assert torch.equal(into[:bs], DEG[n_id[:bs]].clamp(max=4)), "hop 1: min(4, degree) per seed"
    hop1 = torch.unique(u[v < bs])
    hop1 = hop1[hop1 >= bs]
    assert torch.equal(into[hop1], DEG[n_id[hop1]].clamp(max=3)), "hop 2: min(3, degree) per node hop 1 found"
    targets = torch.unique(v)
    assert bool(torch.isin(targets[targets >= bs], hop1).all()), "only the seeds and hop 1 are sampled"
    assert torch.equal(batch.x, FEAT[n_id]) and torch.equal(batch.y, LABEL[n_id[:bs]])
    # Nodes and edges come hop by hop, so PyG's trim_to_layer computes the seeds' outputs unchanged.
    hops_n, hops_e = batch.num_sampled_nodes, batch.num_sampled_edges
    assert sum(hops_n) == len(n_id) and sum(hops_e) == len(v) and hops_n[0] == bs
    assert bool((v[: hops_e[0]] < bs).all()) and bool((v[hops_e[0]:] >= bs).all())
    assert bool((v[hops_e[0]:] < bs + hops_n[1]).all()) and bool((u[: hops_e[0]] < bs + hops_n[1]).all())
    full = MODEL(batch.x.float(), batch.edge_index)[:bs]
    trimmed = MODEL(batch.x.float(), batch.edge_index, num_sampled_nodes_per_hop=hops_n,
                    num_sampled_edges_per_hop=hops_e)[:bs]
    assert torch.allclose(full, trimmed, atol=1e-5)
assert torch.equal(torch.sort(torch.cat(seen)).values, torch.sort(mine).values), "every seed once per epoch"
assert len(loader) == (len(mine) + 63) // 64
# With partitions elsewhere, x came partly from the process's copy of their hottest feature rows (and equals the
# dataset's, above); standalone there is nothing to copy.
cache = context._FEATURE_CACHES.get(g.ndata["feat"]._c.name)
if g.get_partition_book().num_partitions() > 1:
    assert cache is not None and cache.remote_ids_found > 0
else:
    assert cache is None

# A bool mask as input_nodes; collect_features=False leaves x and y out.
loader = tpyg.DistNeighborLoader(g, [2], input_nodes=torch.arange(N) < 100, batch_size=50, collect_features=False)
batch = next(iter(loader))
assert "x" not in batch and "y" not in batch and torch.equal(batch.n_id[:50], torch.arange(50))

# DistLinkNeighborLoader: the batch's edges are real edges; binary labels; triplets; reverse exclusion.
eids = torch.arange(g.rank(), g.num_edges(), 7)
loader = tpyg.DistLinkNeighborLoader(dataset, [3, 2], edge_ids=eids, neg_sampling="binary", batch_size=40,
                                     shuffle=True, exclude="reverse")
for step, batch in enumerate(loader):
    n_id, (a, b) = batch.n_id, batch.edge_label_index
    pos = batch.edge_label == 1
    assert int(pos.sum()) == len(batch.input_id) and int((~pos).sum()) == len(batch.input_id)
    assert torch.equal(SRC[batch.input_id], n_id[a[pos]]) and torch.equal(DST[batch.input_id], n_id[b[pos]])
    key = SRC * N + DST
    assert not bool(torch.isin(n_id[a[~pos]] * N + n_id[b[~pos]], key).any()), "binary negatives are not edges"
    u, v = batch.edge_index
    assert torch.equal(SRC[batch.e_id], n_id[u]) and torch.equal(DST[batch.e_id], n_id[v])
    ends = torch.cat([n_id[a[pos]] * N + n_id[b[pos]], n_id[b[pos]] * N + n_id[a[pos]]])
    assert not bool(torch.isin(n_id[u] * N + n_id[v], ends).any()), "no batch edge (either way) is in its subgraph"
    assert torch.equal(batch.x, FEAT[n_id])
    if step == 2:
        break
loader = tpyg.DistLinkNeighborLoader(dataset, [2], edge_ids=eids, neg_sampling={"mode": "triplet", "amount": 3},
                                     batch_size=30)
batch = next(iter(loader))
assert batch.dst_neg_index.shape == (30, 3)
assert torch.equal(batch.n_id[batch.src_index], SRC[batch.input_id])
assert torch.equal(batch.n_id[batch.dst_pos_index], DST[batch.input_id])

# edge_label_index: node pairs of one's own (edges of the graph or not, as RandomLinkSplit leaves them) with their
# labels; input_id indexes the pairs, labels holding 0 are shifted by 1 (0: negative), the pairs' nodes come first
# and are sampled as seeds.
PAIRS = torch.stack([torch.randint(0, N, (90,)), torch.randint(0, N, (90,))])
PAIRS[:, :10] = torch.stack([SRC[:10], DST[:10]])  # some are edges
PAIR_LABEL = torch.arange(90) % 3
loader = tpyg.DistLinkNeighborLoader(dataset, [3, 2], edge_label_index=PAIRS, edge_label=PAIR_LABEL,
                                     neg_sampling="binary", batch_size=32, shuffle=True)
seen = []
for batch in loader:
    n_id, (a, b), k = batch.n_id, batch.edge_label_index, len(batch.input_id)
    seen.append(batch.input_id)
    assert len(a) == 2 * k
    assert torch.equal(n_id[a[:k]], PAIRS[0][batch.input_id]) and torch.equal(n_id[b[:k]], PAIRS[1][batch.input_id])
    assert torch.equal(batch.edge_label[:k], PAIR_LABEL[batch.input_id] + 1) and bool((batch.edge_label[k:] == 0).all())
    u, v = batch.edge_index
    assert torch.equal(SRC[batch.e_id], n_id[u]) and torch.equal(DST[batch.e_id], n_id[v])
    ends = torch.unique(torch.cat([a, b]))
    assert torch.equal(torch.bincount(v, minlength=len(n_id))[ends], DEG[n_id[ends]].clamp(max=3)), "seeds' hop"
    assert torch.equal(batch.x, FEAT[n_id])
assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(90)), "every pair once per epoch"
batch = next(iter(tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS, batch_size=16)))
assert torch.equal(batch.edge_label, torch.ones(16)) and torch.equal(batch.n_id[batch.edge_label_index[0]],
                                                                      PAIRS[0][batch.input_id])


raises(IndexError, lambda: tpyg.DistNeighborLoader(g, [2], input_nodes=torch.tensor([N]), batch_size=4), str(N))
raises(ValueError, lambda: tpyg.DistNeighborLoader(g, {"x": [2]}, batch_size=4), "edge types")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], neg_sampling="ternary"), "binary")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS, edge_ids=eids), "not both")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS[0]), "[2, n]")
raises(IndexError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS + N), f"outside 0..{N - 1}")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS, exclude="self"), "exclude")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS, edge_label=PAIR_LABEL[:5]),
       "entries")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=PAIRS, edge_label=PAIR_LABEL,
                                                       neg_sampling="triplet"), "triplet")
raises(RuntimeError, lambda: tpyg.init_server(), "tessera launch")
# Edge weights of the wrong dtype are refused when the loader is made, on every machine (one without a partition
# checks the tensor's published spec).
g.edata["int_weights"] = tdist.DistTensor((g.num_edges(),), torch.int64, name="int-weights",
                                          part_policy=g.get_edge_partition_policy(g.canonical_etypes[0]))
int_sampler = tload.NeighborSampler([2], prob="int_weights")
raises(RuntimeError, lambda: tload.DistNodeDataLoader(g, torch.arange(4), int_sampler, batch_size=2),
       "one float32 per edge")
if g.rank() == 0:
    print("OK")
tpyg.shutdown_client()
