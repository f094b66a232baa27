"""Heterogeneous graphs from Python, in one process (standalone) on a generated mag-like graph in OGB's raw layout
(4 node types, 8 relations with the reverse ones): the per-type graph API, heterogeneous blocks checked against
the raw edge files, the homogeneous form, HeteroGraphConv against RelGraphConv, and DistEmbedding per type under
DGL's order of optimizer calls."""
import csv
import functools
import gzip
import os

import numpy as np
import pytest
import torch

import tessera.dataloading as tload
import tessera.distributed as tdist
import tessera.nn as tnn
from tessera import EID, ETYPE, NID, NTYPE
from conftest import tessera

TYPES = ["author", "field_of_study", "institution", "paper"]


@pytest.fixture(scope="module")
def mag(tmp_path_factory):
    d = tmp_path_factory.mktemp("mag")
    tessera("gen", "mag-like", "--nodes", "3000", "--edges", "20000", "--seed", "1", "--layout", "ogb", "--out",
            str(d / "raw"))
    tessera("partition", "--input", str(d / "raw"), "--format", "ogb-mag", "--add-reverse", "--graph-name", "mag",
            "--num-parts", "1", "--out", str(d / "p1"))
    return d


@pytest.fixture(scope="module")
def g(mag):
    tdist.initialize(None)
    return tdist.DistGraph("mag", part_config=str(mag / "p1" / "mag.json"))


def raw_edges(mag, stype, rel, dtype):
    """The (src, dst) pairs of a relation, in original type-local IDs, from OGB's raw files (reverse relations
    are their base relation turned around)."""
    base = rel[len("rev-"):] if rel.startswith("rev-") else rel
    s, d = (dtype, stype) if base != rel else (stype, dtype)
    path = mag / "raw" / "raw" / "relations" / f"{s}___{base}___{d}" / "edge.csv.gz"
    with gzip.open(path, "rt") as f:
        pairs = [(int(a), int(b)) for a, b in csv.reader(f)]
    return [(b, a) for a, b in pairs] if base != rel else pairs


@functools.lru_cache(maxsize=None)
def _orig_nids(mag):
    return torch.from_numpy(np.load(os.path.join(mag, "p1", "part0", "orig_nids.npy")))


def original_ids(mag, g, ntype, ids):
    return _orig_nids(mag)[g.get_partition_book().map_to_homo_nid(ids, ntype)]


def test_graph_api_per_type(g):
    assert g.ntypes == TYPES
    assert len(g.canonical_etypes) == 8 and ("paper", "rev-writes", "author") in g.canonical_etypes
    assert sum(g.num_nodes(t) for t in g.ntypes) == g.num_nodes() == 3000
    assert g.get_ntype_id("paper") == 3 and g.get_etype_id(("author", "writes", "paper")) == g.get_etype_id("writes")
    assert "feat" in g.nodes["paper"].data and "feat" not in g.nodes["author"].data
    assert g.get_node_partition_policy("author").policy_str == "node:author"
    book = g.get_partition_book()
    assert torch.equal(book.partid2nids(0, "paper"), torch.arange(g.num_nodes("paper")))
    labels = g.nodes["paper"].data["label"][np.arange(g.num_nodes("paper"))]
    assert labels.shape == (g.num_nodes("paper"),)


def test_dist_tensor_policy_follows_its_row_count(g):
    t = tdist.DistTensor((g.num_nodes("paper"),), torch.int64, "results-by-size", persistent=True)
    assert t.part_policy.policy_str == "node:paper"
    t[torch.tensor([0, 5])] = torch.tensor([7, 9])
    again = tdist.DistTensor((g.num_nodes("paper"),), torch.int64, "results-by-size", persistent=True)
    assert again[[0, 5]].tolist() == [7, 9]  # persistent: the second creation attaches
    with pytest.raises(ValueError, match="no node or edge type has that many"):
        tdist.DistTensor((g.num_nodes() + 1, 2), torch.float32, "no-such-size")


def test_hetero_blocks_hold_the_graphs_relations(mag, g):
    seeds = torch.arange(0, 80, 2)
    loader = tload.DistNodeDataLoader(g, {"paper": seeds}, tload.MultiLayerFullNeighborSampler(1),
                                      batch_size=len(seeds))
    (input_nodes, output_nodes, (block,)), = list(loader)
    assert torch.equal(output_nodes["paper"], seeds) and list(output_nodes) == ["paper"]
    assert set(input_nodes) == set(TYPES) and torch.equal(input_nodes["paper"][: len(seeds)], seeds)
    seed_set = set(original_ids(mag, g, "paper", seeds).tolist())
    for canonical in g.canonical_etypes:
        stype, rel, dtype = canonical
        r = block[canonical]
        assert r.number_of_dst_nodes() == (len(seeds) if dtype == "paper" else 0)
        src = original_ids(mag, g, stype, r.srcdata[NID][r.indices])
        dst = original_ids(mag, g, dtype, r.dstdata[NID][r.dst_of_edges()])
        got = sorted(zip(src.tolist(), dst.tolist()))
        want = sorted((a, b) for a, b in raw_edges(mag, stype, rel, dtype) if dtype == "paper" and b in seed_set)
        assert got == want, canonical
    assert block.number_of_edges() == sum(block.number_of_edges(c) for c in g.canonical_etypes)


def test_hetero_blocks_chain_by_type_and_cover_every_seed(g):
    train = tdist.node_split(g.nodes["paper"].data["train_mask"], g.get_partition_book(), ntype="paper")
    loader = tload.DistNodeDataLoader(g, {"paper": train}, tload.NeighborSampler([5, 5]), batch_size=64,
                                      shuffle=True, num_samplers=1)
    seen = []
    for input_nodes, output_nodes, blocks in loader:
        seen.append(output_nodes["paper"])
        for t in TYPES:
            assert torch.equal(input_nodes[t], blocks[0].srcnodes[t].data[NID])
            assert torch.equal(blocks[0].dstnodes[t].data[NID], blocks[1].srcnodes[t].data[NID])
            for b in blocks:
                n = b.num_dst_nodes(t)
                assert torch.equal(b.srcdata[NID][t][:n], b.dstdata[NID][t])
        assert torch.equal(blocks[1].dstdata[NID]["paper"], output_nodes["paper"])
        for b in blocks:
            for c in b.canonical_etypes:
                r = b[c]
                assert int(r.indptr[-1]) == r.number_of_edges() and len(r.indptr) == r.number_of_dst_nodes() + 1
                assert r.number_of_edges() == 0 or int(r.indices.max()) < r.number_of_src_nodes()
    assert torch.equal(torch.sort(torch.cat(seen)).values, torch.sort(train).values)


def test_homogeneous_form_carries_node_and_edge_types(g):
    book = g.get_partition_book()
    seeds = torch.arange(10, 50)
    hetero = next(iter(tload.DistNodeDataLoader(g, {"paper": seeds}, tload.MultiLayerFullNeighborSampler(1),
                                                batch_size=40)))[2][0]
    homo_seeds = book.map_to_homo_nid(seeds, "paper")
    _, output_nodes, (block,) = next(iter(tload.DistNodeDataLoader(g, homo_seeds,
                                                                   tload.MultiLayerFullNeighborSampler(1),
                                                                   batch_size=40)))
    assert torch.equal(output_nodes, homo_seeds)
    types, _ = book.map_to_per_ntype(block.srcdata[NID])
    assert torch.equal(block.srcdata[NTYPE], types)
    src, dst = block.edges()
    for r, canonical in enumerate(g.canonical_etypes):
        sel = block.edata[ETYPE] == r
        got = sorted(zip(block.srcdata[NID][src[sel]].tolist(), block.dstdata[NID][dst[sel]].tolist()))
        rel = hetero[canonical]
        want = sorted(zip(book.map_to_homo_nid(rel.srcdata[NID][rel.indices], canonical[0]).tolist(),
                          book.map_to_homo_nid(rel.dstdata[NID][rel.dst_of_edges()], canonical[2]).tolist()))
        assert got == want, canonical


def test_heterographconv_agrees_with_relgraphconv(g):
    """One R-GCN layer two ways: per relation on the heterogeneous block (HeteroGraphConv of GraphConv, right
    norm, external weights) and per edge on the homogeneous form (RelGraphConv, norm 1 / in-degree in the
    relation)."""
    torch.manual_seed(0)
    book = g.get_partition_book()
    seeds = torch.arange(0, 60)
    sampler = tload.MultiLayerFullNeighborSampler(1)
    input_nodes, _, (hb,) = next(iter(tload.DistNodeDataLoader(g, {"paper": seeds}, sampler, batch_size=60)))
    _, _, (block,) = next(iter(tload.DistNodeDataLoader(g, book.map_to_homo_nid(seeds, "paper"), sampler,
                                                         batch_size=60)))
    rels = g.canonical_etypes
    feats = {t: torch.randn(len(ids), 6) for t, ids in input_nodes.items()}
    rgcn = tnn.RelGraphConv(6, 4, len(rels), self_loop=False, bias=False)
    hetero = tnn.HeteroGraphConv({c: tnn.GraphConv(6, 4, norm="right", weight=False, bias=False) for c in rels})
    out = hetero(hb, feats, mod_kwargs={c: {"weight": rgcn.linear_r.W[i]} for i, c in enumerate(rels)})
    assert set(out) == {"paper"}  # only papers are destinations

    # The same inputs in homogeneous order: source p is row rank[p] of its type's features.
    types, local = book.map_to_per_ntype(block.srcdata[NID])
    x = torch.empty(len(types), 6)
    for t, name in enumerate(g.ntypes):
        sel = types == t
        position = {int(v): i for i, v in enumerate(input_nodes[name])}
        x[sel] = feats[name][[position[int(v)] for v in local[sel]]]
    etypes = block.edata[ETYPE]
    dst = block.dst_of_edges()
    key = dst * len(rels) + etypes
    degree = torch.bincount(key, minlength=int(key.max()) + 1)[key]
    homo = rgcn(block, x, etypes, 1.0 / degree.float())
    # Homogeneous destinations are the seeds in homogeneous order, as the hetero block's papers.
    assert torch.allclose(homo, out["paper"], atol=1e-5)


def test_heterographconv_aggregates_and_skips_missing_modules(g):
    seeds = torch.arange(0, 30)
    input_nodes, _, (hb,) = next(iter(tload.DistNodeDataLoader(g, {"paper": seeds}, tload.NeighborSampler([4]),
                                                               batch_size=30)))
    feats = {t: torch.randn(len(ids), 3) for t, ids in input_nodes.items()}
    mods = {c[1]: tnn.GraphConv(3, 2, norm="right") for c in g.canonical_etypes}
    into_paper = [c for c in g.canonical_etypes if c[2] == "paper" and hb.number_of_edges(c)]
    stacked = tnn.HeteroGraphConv(mods, aggregate="stack")(hb, feats)
    assert stacked["paper"].shape == (30, len(into_paper), 2)
    summed = tnn.HeteroGraphConv(mods)(hb, feats)
    assert torch.allclose(summed["paper"], stacked["paper"].sum(1), atol=1e-6)
    with hb.local_scope():
        hb.srcdata["h"] = feats
        assert torch.equal(hb.srcnodes["paper"].data["h"], feats["paper"])
    assert "h" not in hb.srcdata
    view = hb.local_var()
    view.dstdata["y"] = {"paper": torch.zeros(30, 1)}
    assert "y" in view.dstdata and "y" not in hb.dstdata
    with pytest.raises(ValueError, match="needs 30 rows"):
        hb.dstdata["y"] = {"paper": torch.zeros(29, 1)}
    with pytest.raises(KeyError, match="no module for relation"):
        tnn.HeteroGraphConv({"writes": tnn.GraphConv(3, 2)})(hb, feats)
    with pytest.raises(ValueError, match="aggregate"):
        tnn.HeteroGraphConv(mods, aggregate="median")


def test_embedding_steps_under_dgls_call_order(g):
    """DGL's examples call the sparse optimizer's zero_grad() after the forward pass: the step must still apply
    that forward's gradients."""
    emb = tdist.DistEmbedding(g.num_nodes("author"), 4, "author-emb", lambda s, d: torch.zeros(s, dtype=d),
                              g.get_node_partition_policy("author"))
    opt = tdist.optim.SparseAdam([emb], lr=0.1)
    ids = torch.tensor([3, 7])
    loss = emb(ids).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    moved = emb.weight[ids]
    assert torch.allclose(moved, torch.full((2, 4), -0.1), atol=1e-4)
    assert torch.equal(emb.weight[[4]], torch.zeros(1, 4))


def test_bad_typed_seeds_raise(g):
    sampler = tload.NeighborSampler([2])
    with pytest.raises(KeyError, match="node type 'venue'"):
        tload.DistNodeDataLoader(g, {"venue": torch.arange(3)}, sampler)
    with pytest.raises(IndexError, match="outside"):
        tload.DistNodeDataLoader(g, {"paper": torch.tensor([g.num_nodes("paper")])}, sampler)
    with pytest.raises(ValueError, match="empty dict"):
        tload.DistNodeDataLoader(g, {}, sampler)
    with pytest.raises(ValueError, match="prefetch_labels: .* seeds of one type"):
        tload.DistNodeDataLoader(g, {"paper": torch.arange(3), "author": torch.arange(3)},
                                 tload.NeighborSampler([2], prefetch_labels="label"))
    homogeneous = g.get_partition_book().map_to_homo_nid(torch.arange(3), "paper")
    with pytest.raises(ValueError, match="homogeneous form"):
        tload.DistNodeDataLoader(g, homogeneous, tload.NeighborSampler([2], prefetch_node_feats="feat"))
    with pytest.raises(KeyError, match="venue"):
        tload.DistNodeDataLoader(g, {"paper": torch.arange(3)}, tload.NeighborSampler([2], prefetch_node_feats={
            "venue": "feat"}))
    with pytest.raises(KeyError, match="author"):
        tload.DistNodeDataLoader(g, {"paper": torch.arange(3)}, tload.NeighborSampler([2], prefetch_node_feats={
            "author": "feat"}))
    with pytest.raises(KeyError, match="no node type has data 'nope'"):
        tload.DistNodeDataLoader(g, {"paper": torch.arange(3)}, tload.NeighborSampler([2], prefetch_node_feats="nope"))


@pytest.mark.parametrize("named", [True, False])
def test_typed_loader_prefetches_the_rows_each_type_reads(g, named):
    """With seeds given by type, the samplers fetch each node type's input rows and the seeds' labels, named up
    front (prefetch_node_feats / prefetch_labels) or learnt from the loop's first reads: the loop's reads then
    return the prefetched rows, which equal the partition's."""
    with_feat = [nt for nt in g.ntypes if "feat" in g.nodes[nt].data]
    assert with_feat == ["paper"]
    sampler = (tload.NeighborSampler([3, 3], prefetch_node_feats={"paper": ["feat"]}, prefetch_labels="label")
               if named else tload.NeighborSampler([3, 3]))
    loader = tload.DistNodeDataLoader(g, {"paper": torch.arange(90)}, sampler, batch_size=30)
    labels, feats = g.nodes["paper"].data["label"], g.nodes["paper"].data["feat"]
    for epoch in range(2):
        for input_nodes, output_nodes, _ in loader:
            ids, seeds = input_nodes["paper"], output_nodes["paper"]
            # Learnt reads change what batches claimed later fetch: every batch of the second epoch has them.
            if named or epoch == 1:
                assert feats._c.name in ids._tessera_rows and labels._c.name in seeds._tessera_rows
            assert torch.equal(feats[ids], feats[ids.clone()])
            assert torch.equal(labels[seeds], labels[seeds.clone()])
            assert not getattr(input_nodes["author"], "_tessera_rows", None)  # a type the loop does not read


def test_loader_relations_carry_type_local_edge_ids(g):
    """As in DGL, block[etype].edata[dgl.EID] holds type-local edge IDs: find_edges of that type gives each
    edge's ends. (The typed graph services are checked against brute force in test_graph_services.py.)"""
    loader = tload.DistNodeDataLoader(g, {"paper": torch.arange(40)}, tload.NeighborSampler([3, 3]), batch_size=20)
    _, _, blocks = next(iter(loader))
    for block in blocks:
        for c in g.canonical_etypes:
            rel = block[c]
            u, v = rel.edges()
            src, dst = g.find_edges(rel.edata[EID], etype=c)
            assert torch.equal(src, rel.srcdata[NID][u]) and torch.equal(dst, rel.dstdata[NID][v]), c
