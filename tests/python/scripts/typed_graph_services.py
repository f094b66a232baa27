"""Run by test_graph_services.py, standalone or under `tessera launch`: DGL's graph services and the edge loader
on a typed DistGraph (mag-like: 4 node types, 8 relations with their reverses), checked against the relations
read back from OGB's raw files through the partitioner's ID maps. Every check is an assert; trainer 0 prints OK
last."""
import csv
import gzip
import os
import sys

import torch

import tessera.dgl as dgl
import tessera.dgl.distributed  # noqa: F401
from tessera.dgl.dataloading import negative_sampler
from checks import partition_maps, raises

part_config, raw_dir = sys.argv[1], sys.argv[2]
dgl.distributed.initialize("ip_config.txt")
g = dgl.distributed.DistGraph("mag", part_config=part_config)
book = g.get_partition_book()
ETYPES = g.canonical_etypes

# Each relation in the partition's type-local IDs, from the raw files and the partitioner's node map.
orig = torch.from_numpy(partition_maps(part_config, "orig_nids"))
types, local = book.map_to_per_ntype(torch.arange(g.num_nodes()))
new_of_orig = {}
for t, nt in enumerate(g.ntypes):
    new_of_orig[nt] = torch.empty(g.num_nodes(nt), dtype=torch.int64)
    new_of_orig[nt][orig[types == t]] = local[types == t]


def raw_relation(c):
    s, rel, d = c
    reverse = rel.startswith("rev-")
    a, r, b = (d, rel[4:], s) if reverse else c
    with gzip.open(os.path.join(raw_dir, "raw", "relations", f"{a}___{r}___{b}", "edge.csv.gz"), "rt") as f:
        pairs = torch.tensor([[int(x), int(y)] for x, y in csv.reader(f)], dtype=torch.int64)
    u, v = (pairs[:, 1], pairs[:, 0]) if reverse else (pairs[:, 0], pairs[:, 1])
    return new_of_orig[s][u], new_of_orig[d][v]


REL = {c: raw_relation(c) for c in ETYPES}


def keys(c, u, v):
    return u * g.num_nodes(c[2]) + v


# find_edges over every edge of a type gives exactly the relation; degrees per type count it.
ENDS = {}
for c in ETYPES:
    u, v = g.find_edges(torch.arange(g.num_edges(c)), etype=c)
    ENDS[c] = (u, v)
    assert torch.equal(torch.sort(keys(c, u, v)).values, torch.sort(keys(c, *REL[c])).values), c
    assert torch.equal(g.in_degrees(etype=c), torch.bincount(REL[c][1], minlength=g.num_nodes(c[2]))), c
    assert torch.equal(g.out_degrees(etype=c), torch.bincount(REL[c][0], minlength=g.num_nodes(c[0]))), c
    few = torch.tensor([3, 0, 3])
    assert torch.equal(g.in_degrees(few, etype=c[1]), torch.bincount(REL[c][1], minlength=g.num_nodes(c[2]))[few])
# Without etype, DGL's DistGraph counts every edge of homogeneous IDs.
homo_dst = torch.cat([book.map_to_homo_nid(REL[c][1], c[2]) for c in ETYPES])
assert torch.equal(g.in_degrees(), torch.bincount(homo_dst, minlength=g.num_nodes()))
IN_DEG = {c: torch.bincount(REL[c][1], minlength=g.num_nodes(c[2])) for c in ETYPES}

torch.manual_seed(g.rank())
seeds = {"paper": torch.randperm(g.num_nodes("paper"))[:60], "author": torch.randperm(g.num_nodes("author"))[:40]}


def check_real(fr):
    """Every frontier edge is the edge its EID names and ends at a seed."""
    for c in ETYPES:
        u, v = fr.edges(etype=c)
        e = fr.edges[c].data[dgl.EID]
        fu, fv = g.find_edges(e, etype=c)
        assert torch.equal(fu, u) and torch.equal(fv, v), c
        assert len(torch.unique(e)) == len(e)
        assert bool(torch.isin(v, seeds.get(c[2], torch.zeros(0, dtype=torch.int64))).all()), c


# sample_neighbors: fanout counts a node's in-edges of every type together.
fr = dgl.distributed.sample_neighbors(g, seeds, 3)
check_real(fr)
for nt, ids in seeds.items():
    total = sum(IN_DEG[c][ids] for c in ETYPES if c[2] == nt)
    got = sum(torch.bincount(fr.edges(etype=c)[1], minlength=g.num_nodes(nt))[ids] for c in ETYPES if c[2] == nt)
    assert torch.equal(got, total.clamp(max=3)), nt
# sample_etype_neighbors: per type.
fr = dgl.distributed.sample_etype_neighbors(g, seeds, {c: 2 for c in ETYPES})
check_real(fr)
for c in ETYPES:
    if c[2] in seeds:
        got = torch.bincount(fr.edges(etype=c)[1], minlength=g.num_nodes(c[2]))[seeds[c[2]]]
        assert torch.equal(got, IN_DEG[c][seeds[c[2]]].clamp(max=2)), c

# fanout -1 and in_subgraph: exactly the in-edges; exclude_edges removes exactly those given.
in_edges = {c: torch.nonzero(torch.isin(ENDS[c][1], seeds[c[2]])).flatten() if c[2] in seeds
            else torch.zeros(0, dtype=torch.int64) for c in ETYPES}
for fr in (dgl.distributed.sample_neighbors(g, seeds, -1), dgl.distributed.in_subgraph(g, seeds)):
    check_real(fr)
    for c in ETYPES:
        assert torch.equal(torch.sort(fr.edges[c].data[dgl.EID]).values, in_edges[c]), c
dropped = {c: e[::3] for c, e in in_edges.items()}
fr = dgl.distributed.sample_neighbors(g, seeds, -1, exclude_edges=dropped)
for c in ETYPES:
    assert torch.equal(torch.sort(fr.edges[c].data[dgl.EID]).values,
                       in_edges[c][~torch.isin(in_edges[c], dropped[c])]), c

# to_block of a typed frontier: each type's destinations first, every relation's edges, edge data along.
fr = dgl.distributed.sample_etype_neighbors(g, seeds, 4)
for c in ETYPES:
    fr.edges[c].data["w"] = torch.arange(fr.num_edges(c), dtype=torch.float32)
block = dgl.to_block(fr, seeds)
for nt, ids in seeds.items():
    assert torch.equal(block.dstnodes[nt].data[dgl.NID], ids)
    assert torch.equal(block.srcnodes[nt].data[dgl.NID][: len(ids)], ids)
for c in ETYPES:
    rel = block[c]
    bu, bv = rel.edges()
    be = rel.edata[dgl.EID]
    fu, fv = g.find_edges(be, etype=c)
    assert torch.equal(fu, rel.srcdata[dgl.NID][bu]) and torch.equal(fv, rel.dstdata[dgl.NID][bv]), c
    assert torch.equal(fr.edges[c].data[dgl.EID][rel.edata["w"].long()], be), c
    assert torch.equal(torch.sort(be).values, torch.sort(fr.edges[c].data[dgl.EID]).values), c

# edge_subgraph per type: renumbered nodes per type, edges by ID.
picked = {("author", "writes", "paper"): torch.tensor([0, 5, 9]), "cites": torch.tensor([2, 3])}
sub = g.edge_subgraph(picked)
for k, ids in picked.items():
    c = g.to_canonical_etype(k)
    su, sv = sub.edges(etype=c)
    assert torch.equal(sub.nodes[c[0]].data[dgl.NID][su], ENDS[c][0][ids])
    assert torch.equal(sub.nodes[c[2]].data[dgl.NID][sv], ENDS[c][1][ids])

# The edge loader with reverse_types and full neighbourhoods: each layer holds exactly the in-edges of its
# destinations less the batch's edges and, for each batch edge u -> v, the edges v -> u of the reverse type.
REVERSE = {c: next(d for d in ETYPES if d[1] == (c[1][4:] if c[1].startswith("rev-") else "rev-" + c[1]))
           for c in ETYPES}
train = {("author", "writes", "paper"): torch.arange(0, g.num_edges("writes"), 7),
         ("paper", "cites", "paper"): torch.arange(0, g.num_edges("cites"), 5)}
sampler = dgl.dataloading.MultiLayerFullNeighborSampler(2)
loader = dgl.dataloading.DistEdgeDataLoader(g, train, sampler, negative_sampler=negative_sampler.Uniform(2),
                                            exclude="reverse_types", reverse_etypes=REVERSE, batch_size=48,
                                            shuffle=True)
for step, (input_nodes, pair, neg, blocks) in enumerate(loader):
    batch = {c: pair.edges[c].data[dgl.EID] for c in ETYPES}
    assert sum(len(e) for e in batch.values()) == 48 and set(input_nodes) == set(g.ntypes)
    for c in ETYPES:
        pu, pv = pair.edges(etype=c)
        fu, fv = g.find_edges(batch[c], etype=c)
        assert torch.equal(pair.nodes[c[0]].data[dgl.NID][pu], fu) and torch.equal(pair.nodes[c[2]].data[dgl.NID][pv], fv)
        nu, nv = neg.edges(etype=c)
        assert torch.equal(nu, pu.repeat_interleave(2)) and len(nv) == 2 * len(pv), c
        if c not in train:
            assert len(pu) == 0, c
    for nt in g.ntypes:
        assert torch.equal(blocks[-1].dstnodes[nt].data[dgl.NID], pair.nodes[nt].data[dgl.NID])
        assert torch.equal(neg.nodes[nt].data[dgl.NID], pair.nodes[nt].data[dgl.NID])
    reversed_ends = {c: [] for c in ETYPES}  # per type, the (u, v) keys excluded as reverses
    for c, e in batch.items():
        if len(e):
            fu, fv = g.find_edges(e, etype=c)
            reversed_ends[REVERSE[c]].append(keys(REVERSE[c], fv, fu))
    for block in blocks:
        for c in ETYPES:
            dst = block.dstnodes[c[2]].data[dgl.NID]
            u, v = ENDS[c]
            gone = torch.isin(torch.arange(len(u)), batch[c])
            if reversed_ends[c]:
                gone |= torch.isin(keys(c, u, v), torch.cat(reversed_ends[c]))
            expected = torch.nonzero(torch.isin(v, dst) & ~gone).flatten()
            assert torch.equal(torch.sort(block[c].edata[dgl.EID]).values, expected), ("exclusion is exact", c)
    if step == 2:
        break

# Global negatives of a typed graph: pairs of the type's node types that are not edges of that type.
loader = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                            negative_sampler=negative_sampler.GlobalUniform(3), batch_size=60)
_, pair, neg, _ = next(iter(loader))
for c in ETYPES:
    nu, nv = (neg.nodes[nt].data[dgl.NID][x] for nt, x in zip((c[0], c[2]), neg.edges(etype=c)))
    assert len(nu) <= 3 * pair.num_edges(c)
    assert not bool(torch.isin(keys(c, nu, nv), keys(c, *REL[c])).any()), c
assert neg.num_edges() > 0
drawn = negative_sampler.GlobalUniform(2)(g, {"cites": torch.arange(30)})
nu, nv = drawn[("paper", "cites", "paper")]
assert len(nu) == 60 and not bool(torch.isin(keys(ETYPES[2], nu, nv), keys(ETYPES[2], *REL[ETYPES[2]])).any())
nu, nv = negative_sampler.Uniform(3)(g, {"writes": torch.tensor([4, 7])})[("author", "writes", "paper")]
assert torch.equal(nu, ENDS[("author", "writes", "paper")][0][[4, 4, 4, 7, 7, 7]])
assert bool((nv < g.num_nodes("paper")).all())

# Weighted sampling (prob=) on a typed graph: a weight "w" on every edge type (a DistTensor made here and
# assigned to g.edges[etype].data), zero for a third of each type's edges in a pattern of its own; no zero-weight
# edge is drawn, and fanouts count the edges of weight > 0.
W = {c: ((torch.arange(g.num_edges(c)) * (i + 2)) % 3 != 0).float() * (1 + torch.arange(g.num_edges(c)) % 5)
     for i, c in enumerate(ETYPES)}
for c in ETYPES:
    t = dgl.distributed.DistTensor((g.num_edges(c),), torch.float32, name=f"weight-{c[1]}",
                                   part_policy=g.get_edge_partition_policy(c))
    if g.rank() == 0:
        t[torch.arange(g.num_edges(c))] = W[c]
    g.edges[c].data["w"] = t
g.barrier()
POSITIVE = {c: torch.bincount(ENDS[c][1][W[c] > 0], minlength=g.num_nodes(c[2])) for c in ETYPES}
CITES_W = ("paper", "cites", "paper")

# node_split / edge_split with types: each trainer marks its own share of a typed mask (the C++ split of a typed
# DistTensor) with its rank in a DistTensor, checked against the mask read whole: no trainer's marks were
# overwritten (the shares are disjoint), the marks cover the mask, and the shares follow ID order and differ by at
# most one (force_even=True) or lie in the trainer's own partition (force_even=False).
RANK = g.rank()
cites_mask = dgl.distributed.DistTensor((g.num_edges(CITES_W),), torch.uint8, name="cites-mask",
                                        part_policy=g.get_edge_partition_policy(CITES_W))
if RANK == 0:
    cites_mask[torch.arange(g.num_edges(CITES_W))] = (torch.arange(g.num_edges(CITES_W)) % 3 == 0).to(torch.uint8)
g.barrier()
SPLITS = {"node": (g.nodes["paper"].data["train_mask"], g.num_nodes("paper"), g.get_node_partition_policy("paper"),
                   lambda m, even: dgl.distributed.node_split(m, book, ntype="paper", force_even=even),
                   lambda ids: book.nid2partid(ids, "paper")),
          "edge": (cites_mask, g.num_edges(CITES_W), g.get_edge_partition_policy(CITES_W),
                   lambda m, even: dgl.distributed.edge_split(m, book, etype=CITES_W, force_even=even),
                   lambda ids: book.eid2partid(ids, CITES_W))}
for what, (mask, n, policy, split, part_of) in SPLITS.items():
    for even in (True, False):
        owner = dgl.distributed.DistTensor((n,), torch.int64, name=f"{what}-owner-{even}", part_policy=policy)
        share = split(mask, even)
        owner[share] = torch.full((len(share),), RANK + 1, dtype=torch.int64)
        if not even:
            assert torch.equal(part_of(share), torch.full_like(share, book.partid)), (what, "own partition")
        g.barrier()
        assert torch.equal(owner[share], torch.full((len(share),), RANK + 1)), (what, even, "shares overlap")
        want = torch.nonzero(mask[torch.arange(n)]).flatten()
        got = owner[torch.arange(n)]
        assert len(want) > 0 and torch.equal(torch.nonzero(got).flatten(), want), (what, even, "cover the mask")
        if even:
            counts = torch.bincount(got[want])[1:]
            assert int(counts.max() - counts.min()) <= 1, (what, counts)
            assert bool((got[want][1:] >= got[want][:-1]).all()), (what, "shares in ID order")
        g.barrier()

# DistEmbedding per type: each trainer steps a few rows of another machine's partition (its own picks, marked in a
# DistTensor) through SparseAdagrad at lr 1, which moves a row by 1 against its gradient's sign on a first step;
# every trainer then reads exactly the marked rows moved, and every other row at its start.
N_AUTHOR = g.num_nodes("author")
author_emb = dgl.distributed.DistEmbedding(N_AUTHOR, 3, "author-emb",
                                           lambda shape, dtype: torch.zeros(shape, dtype=dtype),
                                           g.get_node_partition_policy("author"))
marked = dgl.distributed.DistTensor((N_AUTHOR,), torch.int64, name="author-stepped",
                                    part_policy=g.get_node_partition_policy("author"))
elsewhere = torch.nonzero(book.nid2partid(torch.arange(N_AUTHOR), "author") != book.partid).flatten()
stepped_ids = (elsewhere if len(elsewhere) else torch.arange(N_AUTHOR))[RANK::16][:10]
marked[stepped_ids] = torch.ones(len(stepped_ids), dtype=torch.int64)
opt = dgl.distributed.optim.SparseAdagrad([author_emb], lr=1.0)
(author_emb(stepped_ids) * -1.0).sum().backward()
opt.step()
g.barrier()
stepped = marked[torch.arange(N_AUTHOR)] == 1
table = author_emb.weight[torch.arange(N_AUTHOR)]
assert torch.allclose(table[stepped], torch.ones(int(stepped.sum()), 3), atol=1e-4), table[stepped][:3]
assert bool((table[~stepped] == 0).all()), "rows no trainer stepped keep their start"
g.barrier()



def check_weighted(fr):
    check_real(fr)
    for c in ETYPES:
        assert bool((W[c][fr.edges[c].data[dgl.EID]] > 0).all()), ("a zero-weight edge was drawn", c)


fr = dgl.distributed.sample_neighbors(g, seeds, 3, prob="w")
check_weighted(fr)
for nt, ids in seeds.items():
    total = sum(POSITIVE[c][ids] for c in ETYPES if c[2] == nt)
    got = sum(torch.bincount(fr.edges(etype=c)[1], minlength=g.num_nodes(nt))[ids] for c in ETYPES if c[2] == nt)
    assert torch.equal(got, total.clamp(max=3)), nt
fr = dgl.distributed.sample_etype_neighbors(g, seeds, {c: 2 for c in ETYPES}, prob="w")
check_weighted(fr)
for c in ETYPES:
    if c[2] in seeds:
        got = torch.bincount(fr.edges(etype=c)[1], minlength=g.num_nodes(c[2]))[seeds[c[2]]]
        assert torch.equal(got, POSITIVE[c][seeds[c[2]]].clamp(max=2)), c
fr = dgl.distributed.sample_neighbors(g, seeds, -1, prob="w")  # DGL: every in-edge of non-zero weight
for c in ETYPES:
    assert torch.equal(torch.sort(fr.edges[c].data[dgl.EID]).values, in_edges[c][W[c][in_edges[c]] > 0]), c
loader = dgl.dataloading.DistNodeDataLoader(g, seeds, dgl.dataloading.NeighborSampler([{c: 2 for c in ETYPES}, 3],
                                                                                      prob="w"), batch_size=50)
for _, _, blocks in loader:
    for block in blocks:
        for c in ETYPES:
            assert bool((W[c][block[c].edata[dgl.EID]] > 0).all()), ("the loader drew a zero-weight edge", c)
# A feature on one edge type only: that type is weighted, the others sampled uniformly, as DGL samples them.
g.edges[CITES_W].data["only"] = g.edges[CITES_W].data["w"]
fr = dgl.distributed.sample_etype_neighbors(g, seeds, {c: 2 for c in ETYPES}, prob="only")
check_real(fr)
for c in ETYPES:
    if c[2] in seeds:
        got = torch.bincount(fr.edges(etype=c)[1], minlength=g.num_nodes(c[2]))[seeds[c[2]]]
        assert torch.equal(got, (POSITIVE[c] if c == CITES_W else IN_DEG[c])[seeds[c[2]]].clamp(max=2)), c
assert bool((W[CITES_W][fr.edges[CITES_W].data[dgl.EID]] > 0).all())
raises(KeyError, lambda: dgl.distributed.sample_neighbors(g, seeds, 3, prob="nope"), "no edge type")


def check_exclusion(blocks, gone_of):
    """Each layer holds exactly the in-edges of its destinations, less gone_of(c) (a mask over c's edges)."""
    for block in blocks:
        for c in ETYPES:
            dst = block.dstnodes[c[2]].data[dgl.NID]
            expected = torch.nonzero(torch.isin(ENDS[c][1], dst) & ~gone_of(c)).flatten()
            assert torch.equal(torch.sort(block[c].edata[dgl.EID]).values, expected), ("exclusion is exact", c)


def pair_eids(pair):
    return {c: pair.edges[c].data[dgl.EID] for c in ETYPES}


# exclude="reverse_id" as DGL takes it on a typed graph: {etype: reverse IDs within the type}. Each cites edge
# u -> v has as reverse the cites edge v -> u where there is one (itself otherwise); writes edges have none.
CITES = ("paper", "cites", "paper")
cu, cv = ENDS[CITES]
ckey = keys(CITES, cu, cv)
corder = torch.argsort(ckey)
cpos = torch.searchsorted(ckey[corder], keys(CITES, cv, cu)).clamp(max=len(ckey) - 1)
rev_cites = torch.where(ckey[corder][cpos] == keys(CITES, cv, cu), corder[cpos], torch.arange(len(ckey)))
assert bool((rev_cites != torch.arange(len(ckey))).any()), "the test graph has reciprocal citations"
reverse_eids = {"cites": rev_cites, "writes": torch.arange(g.num_edges("writes"))}
loader = dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude="reverse_id", reverse_eids=reverse_eids,
                                            batch_size=48, shuffle=True)
for step, (input_nodes, pair, blocks) in enumerate(loader):
    batch = pair_eids(pair)
    gone = {c: torch.isin(torch.arange(g.num_edges(c)), e) for c, e in batch.items()}
    gone[CITES] |= torch.isin(torch.arange(len(ckey)), rev_cites[batch[CITES]])
    check_exclusion(blocks, lambda c: gone[c])
    if step == 2:
        break
assert bool(gone[CITES].sum() > len(batch[CITES])), "some reverses were left out too"


# A function as exclude gets {etype: type-local IDs} and gives what to leave out, as DGL calls it.
def exclude_next(eids):
    assert isinstance(eids, dict) and all(c in ETYPES for c in eids), eids
    return {c[1]: (e + 1) % g.num_edges(c) for c, e in eids.items()}


loader = dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude=exclude_next, batch_size=40)
_, pair, blocks = next(iter(loader))
batch = pair_eids(pair)
check_exclusion(blocks, lambda c: torch.isin(torch.arange(g.num_edges(c)), (batch[c] + 1) % g.num_edges(c)))


# A negative sampler of one's own (DGL's _BaseNegativeSampler) on a typed graph: _generate per edge type, in
# type-local IDs; its pairs arrive as that type's negatives.
class NextDestination(negative_sampler._BaseNegativeSampler):
    def _generate(self, g, eids, canonical_etype):
        u, v = g.find_edges(eids, etype=canonical_etype)
        return u, (v + 1) % g.num_nodes(canonical_etype[2])


loader = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                            negative_sampler=NextDestination(), batch_size=50, shuffle=True)
_, pair, neg, blocks = next(iter(loader))
for c in ETYPES:
    fu, fv = g.find_edges(pair.edges[c].data[dgl.EID], etype=c)
    nu, nv = (neg.nodes[nt].data[dgl.NID][x] for nt, x in zip((c[0], c[2]), neg.edges(etype=c)))
    assert torch.equal(nu, fu) and torch.equal(nv, (fv + 1) % g.num_nodes(c[2])), c
assert neg.num_edges() == pair.num_edges() == 50
for nt in g.ntypes:
    assert torch.equal(blocks[-1].dstnodes[nt].data[dgl.NID], neg.nodes[nt].data[dgl.NID])


def fails_the_batch(negatives, *words):
    bad = dgl.dataloading.DistEdgeDataLoader(g, train, dgl.dataloading.NeighborSampler([2]),
                                             negative_sampler=negatives, batch_size=50)
    try:
        next(iter(bad))
    except Exception as e:  # noqa: B902 (the loader's error, whatever its class)
        for w in words:
            assert w in str(e), (w, str(e))
        return
    raise AssertionError("the batch must fail")


papers = g.num_nodes("paper")
fails_the_batch(lambda g, e: {"cites": (torch.zeros(2, dtype=torch.int64), torch.tensor([0, papers]))},
                "destinations", str(papers), "paper")
fails_the_batch(lambda g, e: (torch.zeros(2), torch.zeros(2)), "{etype: (sources, destinations)}")
fails_the_batch(lambda g, e: {"nope": (torch.zeros(1), torch.zeros(1))}, "nope")


# DGL 0.6-0.9's form (the seed's entity_classify_dist.py): one tensor of homogeneous IDs samples the typed graph
# in homogeneous form. With fanout -1 it is every in-edge of the seeds: mapped back per type, exactly theirs.
homo_seeds = torch.cat([book.map_to_homo_nid(ids, nt) for nt, ids in seeds.items()])
fr = dgl.distributed.sample_neighbors(g, homo_seeds, -1)
u, v = fr.edges()
etype_ids, eids = book.map_to_per_etype(fr.edata[dgl.EID])
(ut, u), (vt, v) = book.map_to_per_ntype(u), book.map_to_per_ntype(v)
for r, c in enumerate(ETYPES):
    at = etype_ids == r
    assert torch.equal(ut[at], torch.full_like(ut[at], g.get_ntype_id(c[0]))), c
    assert torch.equal(vt[at], torch.full_like(vt[at], g.get_ntype_id(c[2]))), c
    fu, fv = g.find_edges(eids[at], etype=c)
    assert torch.equal(fu, u[at]) and torch.equal(fv, v[at]), c
    mine = torch.isin(REL[c][1], seeds[c[2]]) if c[2] in seeds else torch.zeros(len(REL[c][1]), dtype=torch.bool)
    assert torch.equal(torch.sort(keys(c, u[at], v[at])).values,
                       torch.sort(keys(c, REL[c][0][mine], REL[c][1][mine])).values), c


# Bad input: a clear error, nothing sampled.

raises(IndexError, lambda: dgl.distributed.sample_neighbors(g, torch.tensor([g.num_nodes()]), 2), "node")
raises(KeyError, lambda: dgl.distributed.sample_neighbors(g, {"nope": torch.arange(3)}, 2), "nope")
raises(IndexError, lambda: dgl.distributed.sample_neighbors(g, {"paper": torch.tensor([10 ** 6])}, 2), "paper")
raises(KeyError, lambda: g.find_edges(torch.arange(2), etype="nope"), "nope")
raises(ValueError, lambda: g.find_edges(torch.arange(2)), "etype")
raises(KeyError, lambda: dgl.dataloading.DistEdgeDataLoader(g, {"nope": torch.arange(3)}, sampler), "nope")
raises(IndexError, lambda: dgl.dataloading.DistEdgeDataLoader(g, {"cites": torch.tensor([10 ** 6])}, sampler),
       str(10 ** 6))
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude="reverse_types"),
       "reverse_etypes")
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude="reverse_id",
                                                              reverse_eids=torch.arange(3)), "{etype: reverse IDs}")
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(g, train, sampler, exclude="reverse_id",
                                                              reverse_eids={"cites": rev_cites}), "writes")
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(
    g, train, sampler, exclude="reverse_id", reverse_eids={"cites": rev_cites[:5], "writes": torch.arange(3)}),
    "entries")
raises(IndexError, lambda: dgl.dataloading.DistEdgeDataLoader(
    g, train, sampler, exclude="reverse_id", reverse_eids={**reverse_eids, "cites": rev_cites + len(rev_cites)}),
    "reverse_eids of")
raises(ValueError, lambda: dgl.dataloading.DistEdgeDataLoader(
    g, train, sampler, exclude="reverse_types", reverse_etypes={"writes": "cites"}), "reverse")
if g.rank() == 0:
    print("OK")
