"""Run by test_pyg.py: tessera.pyg's node and link loaders on a typed graph (mag-like) yield PyG HeteroData,
each batch checked against the graph's own edges (find_edges of each type, checked against the raw relations in
typed_graph_services.py) and node data. Every check is an assert; prints OK last."""
import sys

import torch
from torch_geometric.data import HeteroData

import tessera.pyg as tpyg
from checks import raises

part_config = sys.argv[1]
tpyg.init_client(None)
g = tpyg.DistDataset("mag", part_config).graph
papers = torch.arange(0, g.num_nodes("paper"), 3)
loader = tpyg.DistNeighborLoader(g, [4, 2], input_nodes=("paper", papers), batch_size=50, shuffle=True)
IN_DEG = {c: g.in_degrees(etype=c) for c in g.canonical_etypes}
seen = []
for step, batch in enumerate(loader):
    assert isinstance(batch, HeteroData)
    bs = batch["paper"].batch_size
    seen.append(batch["paper"].n_id[:bs])
    for c in g.canonical_etypes:
        u, v = batch[c].edge_index
        src, dst = g.find_edges(batch[c].e_id, etype=c)
        assert torch.equal(src, batch[c[0]].n_id[u]) and torch.equal(dst, batch[c[2]].n_id[v]), c
        counts = torch.bincount(v, minlength=batch[c[2]].num_nodes)
        # Each edge type samples its own fan-out: min(4, that type's in-degree) into every seed.
        if c[2] == "paper":
            assert torch.equal(counts[:bs], IN_DEG[c][batch["paper"].n_id[:bs]].clamp(max=4)), c
        assert len(counts) == 0 or int(counts.max()) <= 4
    assert torch.equal(batch["paper"].x, g.nodes["paper"].data["feat"][batch["paper"].n_id])
    assert torch.equal(batch["paper"].y, g.nodes["paper"].data["label"][batch["paper"].n_id[:bs]])
    assert "x" not in batch["author"]  # featureless types have none
    if step == 3:
        break



def check_subgraph(batch):
    for c in g.canonical_etypes:
        u, v = batch[c].edge_index
        src, dst = g.find_edges(batch[c].e_id, etype=c)
        assert torch.equal(src, batch[c[0]].n_id[u]) and torch.equal(dst, batch[c[2]].n_id[v]), c
    assert torch.equal(batch["paper"].x, g.nodes["paper"].data["feat"][batch["paper"].n_id])


# The link loader on a typed graph: edge_label_index names the supervision type; its pairs (then the binary
# negatives, which are not edges of the type) sit on that type's store, in indices among its end types' nodes.
W = ("author", "writes", "paper")
PAPERS = g.num_nodes("paper")
WU, WV = g.find_edges(torch.arange(g.num_edges(W)), etype=W)
loader = tpyg.DistLinkNeighborLoader(g, [3, 2], edge_label_index=W, neg_sampling="binary", batch_size=40,
                                     shuffle=True)
for step, batch in enumerate(loader):
    assert isinstance(batch, HeteroData)
    (a, b), k = batch[W].edge_label_index, len(batch[W].input_id)
    fu, fv = g.find_edges(batch[W].input_id, etype=W)
    assert len(a) == 2 * k and torch.equal(batch["author"].n_id[a[:k]], fu)
    assert torch.equal(batch["paper"].n_id[b[:k]], fv)
    assert torch.equal(batch[W].edge_label, torch.cat([torch.ones(k), torch.zeros(k)]))
    negatives = batch["author"].n_id[a[k:]] * PAPERS + batch["paper"].n_id[b[k:]]
    assert not bool(torch.isin(negatives, WU * PAPERS + WV).any()), "binary negatives are not edges of the type"
    check_subgraph(batch)
    if step == 2:
        break
batch = next(iter(tpyg.DistLinkNeighborLoader(g, [2], edge_label_index="writes",
                                              neg_sampling={"mode": "triplet", "amount": 2}, batch_size=30)))
fu, fv = g.find_edges(batch[W].input_id, etype=W)
assert torch.equal(batch["author"].n_id[batch["author"].src_index], fu)
assert torch.equal(batch["paper"].n_id[batch["paper"].dst_pos_index], fv)
assert batch["paper"].dst_neg_index.shape == (30, 2)
# Some of the type's edges (edge_ids, type-local), each left out of its own batch's subgraph (exclude="self").
some = torch.arange(0, g.num_edges(W), 5)
loader = tpyg.DistLinkNeighborLoader(g, [-1, -1], edge_label_index=W, edge_ids=some, exclude="self", batch_size=25,
                                     shuffle=True)
for step, batch in enumerate(loader):
    assert bool(torch.isin(batch[W].input_id, some).all()) and len(batch[W].input_id) == 25
    assert not bool(torch.isin(batch[W].e_id, batch[W].input_id).any()), "a batch edge is in its own subgraph"
    check_subgraph(batch)
    if step == 2:
        break
# Node pairs of one's own, (edge type, [2, n] type-local IDs), labelled; every pair once per epoch.
PAIRS = torch.stack([torch.randint(0, g.num_nodes("author"), (50,)), torch.randint(0, PAPERS, (50,))])
loader = tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=(W, PAIRS), edge_label=torch.arange(50) % 2,
                                     neg_sampling="binary", batch_size=20, shuffle=True)
seen = []
for batch in loader:
    (a, b), ids = batch[W].edge_label_index, batch[W].input_id
    seen.append(ids)
    assert torch.equal(batch["author"].n_id[a[:len(ids)]], PAIRS[0][ids])
    assert torch.equal(batch["paper"].n_id[b[:len(ids)]], PAIRS[1][ids])
    assert torch.equal(batch[W].edge_label, torch.cat([ids % 2 + 1, torch.zeros(len(ids), dtype=torch.int64)]))
    check_subgraph(batch)
assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(50))

fan = {c: [3, 2] for c in g.canonical_etypes}
batch = next(iter(tpyg.DistNeighborLoader(g, fan, input_nodes="paper", batch_size=20)))
assert batch["paper"].batch_size == 20
raises(KeyError, lambda: tpyg.DistNeighborLoader(g, {**fan, ("a", "b", "c"): [1, 1]}, input_nodes="paper"), "b")
raises(ValueError, lambda: tpyg.DistNeighborLoader(g, {**fan, g.canonical_etypes[0]: [3]}, input_nodes="paper"),
       "lengths")
raises(ValueError, lambda: tpyg.DistNeighborLoader(g, {**fan, g.canonical_etypes[0]: [5, 2]}, input_nodes="paper"),
       "same number")
raises(KeyError, lambda: tpyg.DistNeighborLoader(g, [2], input_nodes=("venue", None)), "venue")
raises(IndexError, lambda: tpyg.DistNeighborLoader(g, [2], input_nodes=("paper", torch.tensor([10 ** 6]))),
       str(10 ** 6))
raises(ValueError, lambda: tpyg.DistNeighborLoader(g, [2], input_nodes=torch.arange(3)), "ntype")
raises(ValueError, lambda: tpyg.DistLinkNeighborLoader(g, [2]), "edge type")
raises(KeyError, lambda: tpyg.DistLinkNeighborLoader(g, [2], edge_label_index=("nope", PAIRS)), "nope")
raises(IndexError, lambda: tpyg.DistLinkNeighborLoader(
    g, [2], edge_label_index=(W, PAIRS + torch.tensor([[g.num_nodes("author")], [0]]))), "of type 'author'")
print("OK")
