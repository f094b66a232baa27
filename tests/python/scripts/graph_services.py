"""Run by test_graph_services.py, standalone or under `tessera launch`: DGL's graph services and the edge loader
on a DistGraph, checked against the graph rebuilt by brute force from the partitioner's input and its ID maps.
Every check is an assert; trainer 0 prints OK last."""
import os
import sys

import torch

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401
from tessera import _C
from tessera.dgl.dataloading import negative_sampler
from checks import input_graph, raises

part_config, data_dir = sys.argv[1], sys.argv[2]
dgl.distributed.initialize("ip_config.txt")
g = dgl.distributed.DistGraph("small", part_config=part_config)

# The whole graph in the partition's IDs, from the input edges and the partitioner's maps.
meta, orig_nids, SRC, DST = input_graph(part_config, data_dir)
N, M = g.num_nodes(), g.num_edges()
assert len(SRC) == M

# find_edges, degrees.
src, dst = g.find_edges(torch.arange(M))
assert torch.equal(src, SRC) and torch.equal(dst, DST)
assert torch.equal(dgl.distributed.find_edges(g, torch.tensor([5, 0]))[0], SRC[[5, 0]])
assert torch.equal(g.in_degrees(), torch.bincount(DST, minlength=N))
assert torch.equal(g.out_degrees(), torch.bincount(SRC, minlength=N))
few = torch.tensor([7, 0, N - 1, 7])
assert torch.equal(g.out_degrees(few), torch.bincount(SRC, minlength=N)[few])
assert torch.equal(g.in_degrees(few), torch.bincount(DST, minlength=N)[few])

# A DistTensor pickles as a handle (DGL's examples torch.save one): it reopens the same rows.
import pickle  # noqa: E402
feat = g.ndata["feat"]
assert torch.equal(pickle.loads(pickle.dumps(feat))[few.abs()], feat[few.abs()])

# sample_neighbors: real in-edges with their IDs, min(fanout, degree) per node without replacement.
torch.manual_seed(g.rank())
seeds = torch.randperm(N)[:200]
deg = torch.bincount(DST, minlength=N)
for fanout in (0, 3, 10):
    fr = dgl.distributed.sample_neighbors(g, seeds, fanout)
    u, v = fr.edges()
    e = fr.edata[dgl.EID]
    assert fr.num_nodes() == N
    assert torch.equal(SRC[e], u) and torch.equal(DST[e], v), "every frontier edge is the edge its EID names"
    assert bool(torch.isin(v, seeds).all())
    assert torch.equal(torch.bincount(v, minlength=N)[seeds], deg[seeds].clamp(max=fanout))
    assert len(torch.unique(e)) == len(e)
fr = g.sample_neighbors(seeds, 4, replace=True)
assert torch.equal(torch.bincount(fr.edges()[1], minlength=N)[seeds], torch.where(deg[seeds] > 0, 4, 0))

# fanout -1 and in_subgraph: exactly the in-edges; exclude_edges removes exactly those given.
in_edges = torch.nonzero(torch.isin(DST, seeds)).flatten()
for fr in (dgl.distributed.sample_neighbors(g, seeds, -1), dgl.distributed.in_subgraph(g, seeds)):
    assert torch.equal(torch.sort(fr.edata[dgl.EID]).values, in_edges)
dropped = in_edges[::3]
fr = dgl.distributed.sample_neighbors(g, seeds, -1, exclude_edges=dropped)
assert torch.equal(torch.sort(fr.edata[dgl.EID]).values, in_edges[~torch.isin(in_edges, dropped)])

# prob= names a DistTensor assigned here as well as partition data: with fanout -1, exactly the in-edges of
# non-zero weight (DGL's rule); with a fanout, only those.
weight = dgl.distributed.DistTensor((M,), torch.float32, name="made-weights",
                                    part_policy=g.get_edge_partition_policy(g.canonical_etypes[0]))
made = (torch.arange(M) % 4 != 1).float()
if g.rank() == 0:
    weight[torch.arange(M)] = made
g.barrier()
g.edata["made"] = weight
fr = dgl.distributed.sample_neighbors(g, seeds, -1, prob="made")
assert torch.equal(torch.sort(fr.edata[dgl.EID]).values, in_edges[made[in_edges] > 0])
fr = dgl.distributed.sample_neighbors(g, seeds, 2, prob="made")
assert bool((made[fr.edata[dgl.EID]] > 0).all()) and fr.num_edges() > 0
# A sampler follows g.edata[prob] when it is reassigned; a loader made before keeps its own weights, even once
# their DistTensor is gone (standalone: with servers, the tensor's partitions go with it).
weighted = dgl.dataloading.NeighborSampler([3], prob="made")
before = dgl.dataloading.DistNodeDataLoader(g, seeds, weighted, batch_size=len(seeds))
other = dgl.distributed.DistTensor((M,), torch.float32, name="other-weights",
                                   part_policy=g.get_edge_partition_policy(g.canonical_etypes[0]))
flipped = 1 - made
if g.rank() == 0:
    other[torch.arange(M)] = flipped
g.barrier()
g.edata["made"] = other
_, _, (block,) = next(iter(dgl.dataloading.DistNodeDataLoader(g, seeds, weighted, batch_size=len(seeds))))
assert bool((flipped[block.edata[dgl.EID]] > 0).all()) and block.num_edges() > 0, "the reassigned weights"
if int(os.environ.get("WORLD_SIZE", "1")) == 1:
    del weight
    assert not _C.tensor_exists("made-weights")
    _, _, (block,) = next(iter(before))
    assert bool((made[block.edata[dgl.EID]] > 0).all()) and block.num_edges() > 0, "the loader's own weights"

# to_block: destinations first, every block edge the frontier's edge.
fr = dgl.distributed.sample_neighbors(g, seeds, 5)
fr.edata["w"] = torch.arange(fr.num_edges(), dtype=torch.float32)
block = dgl.to_block(fr, seeds)
assert block.num_dst_nodes() == len(seeds)
assert torch.equal(block.srcdata[dgl.NID][: len(seeds)], seeds)
assert torch.equal(block.dstdata[dgl.NID], seeds)
bu, bv = block.edges()
be = block.edata[dgl.EID]
assert torch.equal(SRC[be], block.srcdata[dgl.NID][bu]) and torch.equal(DST[be], block.dstdata[dgl.NID][bv])
assert torch.equal(fr.edata[dgl.EID][block.edata["w"].long()], be), "edge data follows its edges"
assert len(torch.unique(block.srcdata[dgl.NID])) == block.num_src_nodes()
outside = dgl.to_block(fr, seeds, include_dst_in_src=False)
ou, ov = outside.edges()
assert torch.equal(SRC[outside.edata[dgl.EID]], outside.srcdata[dgl.NID][ou])
assert set(outside.srcdata[dgl.NID].tolist()) == set(fr.edges()[0].tolist())

# edge_subgraph: renumbered nodes, edges by ID.
sub = g.edge_subgraph(torch.tensor([3, 9, 3 + M // 2]))
su, sv = sub.edges()
assert torch.equal(sub.ndata[dgl.NID][su], SRC[[3, 9, 3 + M // 2]])
assert torch.equal(sub.ndata[dgl.NID][sv], DST[[3, 9, 3 + M // 2]])

# The edge loader with reverse exclusion and full neighbourhoods: each layer's edges are exactly the in-edges
# of its destinations less the batch's edges and their reverses.
key = SRC * N + DST
order = torch.argsort(key)
rev_key = DST * N + SRC
pos = torch.searchsorted(key[order], rev_key).clamp(max=M - 1)
reverse = torch.where(key[order][pos] == rev_key, order[pos], torch.arange(M))
train = dgl.distributed.edge_split(torch.ones(M, dtype=torch.bool), g.get_partition_book(), force_even=True)
# edge_split as DGL splits: a mask's non-zero IDs, shares in ID order differing by at most one, covering all.
world = int(os.environ.get("WORLD_SIZE", "1"))
mask = torch.arange(M) % 3 != 0
shares = [dgl.distributed.edge_split(mask, g.get_partition_book(), rank=r, force_even=True) for r in range(world)]
assert torch.equal(torch.cat(shares), torch.nonzero(mask).flatten())
assert max(map(len, shares)) - min(map(len, shares)) <= 1
assert torch.equal(shares[g.rank()], dgl.distributed.edge_split(mask, g.get_partition_book(), force_even=True))
sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
loader = dgl.dataloading.DistEdgeDataLoader(g, train, sampler, negative_sampler=negative_sampler.Uniform(3),
                                            exclude="reverse_id", reverse_eids=reverse, batch_size=64,
                                            shuffle=True)
seen = []
for step, (input_nodes, pair, neg, blocks) in enumerate(loader):
    nodes = pair.ndata[dgl.NID]
    eids = pair.edata[dgl.EID]
    seen.append(eids)
    pu, pv = pair.edges()
    assert torch.equal(nodes[pu], SRC[eids]) and torch.equal(nodes[pv], DST[eids])
    nu, nv = neg.edges()
    assert torch.equal(neg.ndata[dgl.NID], nodes) and torch.equal(nu, pu.repeat_interleave(3))
    assert torch.equal(blocks[-1].dstdata[dgl.NID], nodes) and torch.equal(input_nodes, blocks[0].srcdata[dgl.NID])
    excluded = torch.cat([eids, reverse[eids]])
    for block in blocks:
        expected = torch.nonzero(torch.isin(DST, block.dstdata[dgl.NID]) & ~torch.isin(torch.arange(M), excluded))
        assert torch.equal(torch.sort(block.edata[dgl.EID]).values, expected.flatten()), "exclusion is exact"
    if step == 3:
        break
assert len(torch.unique(torch.cat(seen))) == len(torch.cat(seen))

# Global negatives are not edges, nor self-loops.
loader = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                            negative_sampler=negative_sampler.GlobalUniform(2), batch_size=50)
_, pair, neg, _ = next(iter(loader))
nu, nv = (neg.ndata[dgl.NID][x] for x in neg.edges())
assert len(nu) > 0 and bool((nu != nv).all()) and not bool(torch.isin(nu * N + nv, key).any())
# Called directly, as DGL's samplers can be: the same rules, and Uniform keeps each edge's source.
gu, gv = negative_sampler.GlobalUniform(2)(g, torch.arange(50))
assert len(gu) == 100 and bool((gu != gv).all()) and not bool(torch.isin(gu * N + gv, key).any())
pu, pv = negative_sampler.Uniform(3)(g, torch.tensor([4, 7]))
assert torch.equal(pu, SRC[[4, 4, 4, 7, 7, 7]]) and len(pv) == 6

# A negative sampler of one's own (DGL's _BaseNegativeSampler) runs on the sampler thread: its pairs arrive.
class EveryOtherNode(negative_sampler._BaseNegativeSampler):
    def _generate(self, g, eids, canonical_etype):
        src, _ = g.find_edges(eids)
        return src, (src + 1) % g.num_nodes()


loader = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                            negative_sampler=EveryOtherNode(), batch_size=50)
_, pair, neg, _ = next(iter(loader))
nu, nv = (neg.ndata[dgl.NID][x] for x in neg.edges())
assert torch.equal(nu, SRC[pair.edata[dgl.EID]]) and torch.equal(nv, (nu + 1) % N)
bad = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                         negative_sampler=lambda g, e: (e, e + N), batch_size=50)
try:
    next(iter(bad))
    raise AssertionError("a negative node out of range must fail the batch")
except Exception as e:  # noqa: B902 (the loader's error, whatever its class)
    assert "negative sampler" in str(e) and str(N - 1) in str(e), str(e)

# A DistDataLoader with the guide's collate function prepares batches on its own thread.
def sample_blocks(batch):
    batch = torch.as_tensor(batch)
    frontier = dgl.distributed.sample_neighbors(g, batch, 5, replace=True)
    return dgl.to_block(frontier, torch.sort(batch).values)

train_nid = torch.nonzero(g.ndata["train_mask"][torch.arange(N)]).flatten()
dl = dgl.distributed.DistDataLoader(dataset=train_nid.numpy(), batch_size=32, collate_fn=sample_blocks,
                                    shuffle=True, drop_last=False)
total = 0
for block in dl:
    feats = g.ndata["feat"][block.srcdata[dgl.NID]]  # the main thread reads while the next batch samples
    assert feats.shape[0] == block.num_src_nodes()
    total += block.num_dst_nodes()
assert total == len(train_nid) and len(dl) == (len(train_nid) + 31) // 32

# Bad input: a clear error, nothing sampled.
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude="reverse_id"), "reverse_eids")
raises(IndexError, lambda: dgl.dataloading.DistEdgeDataLoader(g, torch.tensor([M]), sampler), str(M))
raises(ValueError, lambda: negative_sampler.Uniform(0), "at least 1")
raises(IndexError, lambda: g.find_edges(torch.tensor([-1])), "-1")
raises(IndexError, lambda: dgl.distributed.sample_neighbors(g, torch.tensor([N]), 3), str(N))
raises(KeyError, lambda: dgl.distributed.sample_neighbors(g, seeds, {"nope": 3}), "nope")
raises(KeyError, lambda: dgl.dataloading.DistEdgeDataLoader(g, {"nope": train}, sampler), "nope")
raises(ValueError, lambda: dgl.to_block(fr, seeds[:5]), "not among")
if g.rank() == 0:
    print("OK")
