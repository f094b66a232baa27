"""Run by test_pyg.py: tessera.pyg's node loader on a typed graph (mag-like) yields PyG HeteroData, each batch
checked against the graph's own edges (find_edges of each type, checked against the raw relations in
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
print("OK")
