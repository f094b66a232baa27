"""tessera.distributed / tessera.dataloading in one process (standalone mode) on a generated 1-partition graph:
the API DGL's users call, its semantics, and bad input raising Python exceptions with Tessera's message."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import tessera
import tessera.dataloading as tload
import tessera.distributed as tdist
from conftest import python_env


@pytest.fixture(scope="module")
def g(small_graph):
    tdist.initialize(None)
    return tdist.DistGraph("small", part_config=str(small_graph / "p1" / "small.json"))


def test_graph_structure_and_data(g):
    assert g.num_nodes() == 3000 and g.num_nodes("_N") == 3000
    assert g.num_edges() == g.num_edges(("_N", "_E", "_N")) > 0
    assert g.ntypes == ["_N"] and g.canonical_etypes == [("_N", "_E", "_N")] and g.etypes == ["_E"]
    assert {"feat", "label", "train_mask", "val_mask", "test_mask"} <= set(g.ndata.keys())
    assert "feat" in g.ndata and "nope" not in g.ndata
    assert g.nodes["_N"].data["feat"].shape == g.ndata["feat"].shape
    feat = g.ndata["feat"]
    assert len(feat) == 3000 and feat.dtype == torch.float32
    assert g.rank() == 0
    g.barrier()


def test_partition_book(g):
    pb = g.get_partition_book()
    assert pb.partid == 0 and pb.num_partitions() == 1
    assert pb.metadata() == [{"machine_id": 0, "num_nodes": 3000, "num_edges": g.num_edges()}]
    assert torch.equal(pb.partid2nids(0), torch.arange(3000))
    assert torch.equal(pb.nid2partid(torch.tensor([0, 2999])), torch.tensor([0, 0]))
    types, ids = pb.map_to_per_ntype(torch.tensor([5, 7]))
    assert types.tolist() == [0, 0] and ids.tolist() == [5, 7]
    with pytest.raises(IndexError, match="3000"):
        pb.nid2partid([3000])


def test_pull_accepts_torch_numpy_and_lists(g):
    feat = g.ndata["feat"]
    a = feat[torch.tensor([3, 1, 3])]
    assert a.shape == (3, feat.shape[1])
    torch.testing.assert_close(a, feat[np.array([3, 1, 3])])
    torch.testing.assert_close(a, feat[[3, 1, 3]])
    torch.testing.assert_close(a[0], a[2])
    assert feat[torch.tensor([], dtype=torch.int64)].shape == (0, feat.shape[1])


def test_dist_tensor_create_push_pull(g):
    t = tdist.DistTensor((g.num_nodes(), 4), torch.float32, "scratch", persistent=True)
    assert t.shape == (3000, 4) and t.dtype == torch.float32 and t.name == "scratch" and len(t) == 3000
    torch.testing.assert_close(t[[0, 1]], torch.zeros(2, 4))
    t[torch.tensor([7, 9])] = torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    torch.testing.assert_close(t[[9, 7]], torch.tensor([[5.0, 6, 7, 8], [1, 2, 3, 4]]))
    ones = tdist.DistTensor((3000, 2), torch.int64, "ones", init_func=lambda shape, dtype: torch.ones(shape,
                                                                                                      dtype=dtype))
    assert ones[[0, 2999]].tolist() == [[1, 1], [1, 1]]
    g.ndata["scratch"] = t
    assert "scratch" in g.ndata and g.ndata["scratch"] is t


def test_bad_input_raises_python_exceptions(g):
    feat = g.ndata["feat"]
    with pytest.raises(IndexError, match="3000"):
        feat[[0, 3000]]
    with pytest.raises(IndexError):
        feat[[-1]]
    with pytest.raises(KeyError, match="featt"):
        g.ndata["featt"]
    with pytest.raises(TypeError, match="integers"):
        feat[torch.tensor([0.5])]
    t = tdist.DistTensor((3000, 3), torch.float32, "typed")
    with pytest.raises(TypeError, match="float32"):
        t[[0]] = torch.zeros(1, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"\(1, 3\)"):
        t[[0]] = torch.zeros(1, 4)
    with pytest.raises(ValueError, match="graph_name"):
        tdist.DistGraph("other")
    with pytest.raises(TypeError):
        tdist.DistTensor((3000, 3), torch.complex64, "c")
    with pytest.raises(ValueError, match="part_policy"):
        tdist.DistTensor((17, 3), torch.float32, "odd")


def test_node_split_follows_dgl(g):
    mask = g.ndata["train_mask"]
    ids = tdist.node_split(mask, g.get_partition_book(), force_even=True)
    expected = torch.nonzero(mask[torch.arange(3000)]).flatten()
    assert torch.equal(ids, expected)
    # DGL's quirk: any argument is a mask, so an arange leaves node 0 out.
    everything = tdist.node_split(np.arange(g.num_nodes()), g.get_partition_book(), force_even=True)
    assert torch.equal(everything, torch.arange(1, 3000))
    # A column mask splits as a flat one; a mask of several values per ID is refused.
    column = mask[torch.arange(3000)].reshape(-1, 1)
    assert torch.equal(tdist.node_split(column, g.get_partition_book()), expected)
    with pytest.raises(ValueError, match="one value per ID"):
        tdist.node_split(torch.ones(3000, 2), g.get_partition_book())


def test_even_shares_are_dgls_and_cover_every_id():
    for n in range(12):
        for world in range(1, 5):
            ranges = [tessera._C.even_range(n, rank, world) for rank in range(world)]
            size, extra = divmod(n, world)
            # The first n % world ranks take one more, and the ranges tile [0, n).
            assert [end - first for first, end in ranges] == [size + (r < extra) for r in range(world)]
            assert ranges[0][0] == 0 and ranges[-1][1] == n
            assert all(ranges[r][1] == ranges[r + 1][0] for r in range(world - 1))


def test_loader_yields_every_seed_once_with_chained_blocks(g):
    seeds = tdist.node_split(g.ndata["train_mask"], g.get_partition_book())
    sampler = tload.NeighborSampler([4, 3])
    loader = tload.DistNodeDataLoader(g, seeds, sampler, batch_size=64, shuffle=True, drop_last=False)
    assert len(loader) == (len(seeds) + 63) // 64
    for epoch in range(2):
        seen = []
        for input_nodes, output_nodes, blocks in loader:
            seen.append(output_nodes)
            assert len(blocks) == 2
            assert torch.equal(input_nodes, blocks[0].srcdata[tessera.NID])
            assert torch.equal(blocks[1].dstdata[tessera.NID], output_nodes)
            # The destinations of a layer are the sources of the next, and
            # come first among its own sources.
            assert torch.equal(blocks[0].dstdata[tessera.NID], blocks[1].srcdata[tessera.NID])
            for block, fanout in zip(blocks, (4, 3)):
                deg = block.in_degrees()
                assert int(deg.max()) <= fanout
                assert int(block.indices.max()) < block.number_of_src_nodes()
                assert block.num_dst_nodes() == block.number_of_dst_nodes() == len(deg)
                src, dst = block.edges()
                assert len(src) == len(dst) == block.num_edges()
            # Rows the loader prefetched equal a direct pull.
            x = g.ndata["feat"][input_nodes]
            torch.testing.assert_close(x, g.ndata["feat"]._c.pull(input_nodes))
            y = g.ndata["label"][output_nodes]
            torch.testing.assert_close(y, g.ndata["label"]._c.pull(output_nodes))
        assert torch.equal(torch.sort(torch.cat(seen)).values, seeds)


def _nice_of_threads():
    """{thread id: nice value} of this process's threads (field 19 of /proc/self/task/<tid>/stat)."""
    nice = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # after "pid (comm)": field 3 is fields[0]
            nice[int(tid)] = int(fields[16])
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return nice


def test_loader_sampler_threads_yield_to_the_training_thread(g):
    """Sampler threads run TESSERA_SAMPLER_NICE (default 5) nice levels below the thread that trains."""
    own = os.nice(0)
    before = set(_nice_of_threads())
    loader = tload.DistNodeDataLoader(g, torch.arange(0, 3000, 3), tload.NeighborSampler([4, 3]), batch_size=64,
                                      num_samplers=2)
    batches = iter(loader)
    next(batches)  # the epoch's sampler thread is up, and waits to prepare the next batches
    fresh = {tid: nice for tid, nice in _nice_of_threads().items() if tid not in before}
    assert os.nice(0) == own
    assert min(19, own + 5) in fresh.values(), fresh
    assert all(nice in (own, min(19, own + 5)) for nice in fresh.values()), fresh


@pytest.mark.parametrize("aggregator", ["mean", "gcn"])
def test_first_sageconv_gets_its_aggregation_from_the_loader(g, aggregator):
    """A first SAGEConv on the rows the loop read asks the loader for their aggregation; the batches sampled
    after carry it (summed by the sampler thread as it copied the rows), the layer runs on it, and its output
    and gradients are the layer's on the rows alone."""
    import tessera.nn as tnn
    sampler = tload.NeighborSampler([4], prefetch_node_feats=["feat"])
    loader = tload.DistNodeDataLoader(g, torch.arange(0, 3000, 5), sampler, batch_size=32, num_samplers=1)
    torch.manual_seed(0)
    conv = tnn.SAGEConv(g.ndata["feat"].shape[1], 4, aggregator)
    served = 0
    for input_nodes, _, blocks in loader:
        x = g.ndata["feat"][input_nodes]
        served += blocks[0]._tessera_inputs.aggregated(aggregator) is not None
        out = conv(blocks[0], x)
        ref = conv(blocks[0], x.clone())  # the rows alone: aggregated by the layer
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
        params = list(conv.parameters())
        for a, b in zip(torch.autograd.grad(out.sum(), params), torch.autograd.grad(ref.sum(), params)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    # All but the batches in flight when the first one asked.
    assert served >= len(loader) - 6, f"{served} of {len(loader)} batches came aggregated"


def test_full_neighbor_sampling_takes_every_in_edge(g):
    seeds = torch.arange(0, 3000, 7)
    loader = tload.DistNodeDataLoader(g, seeds, tload.MultiLayerFullNeighborSampler(1), batch_size=5000)
    _, _, (block,) = next(iter(loader))
    # Sampling -1 of every destination's in-edges gives its full in-degree:
    # twice with fanout 10**6 must agree.
    wide = tload.DistNodeDataLoader(g, seeds, tload.NeighborSampler([10 ** 6]), batch_size=5000)
    _, _, (other,) = next(iter(wide))
    assert torch.equal(block.in_degrees(), other.in_degrees())
    # As in DGL, a fanout of 0 samples no neighbour; below -1 is an error.
    _, _, (none,) = next(iter(tload.DistNodeDataLoader(g, seeds, tload.NeighborSampler([0]), batch_size=5000)))
    assert none.num_edges() == 0 and none.num_dst_nodes() == len(seeds)
    with pytest.raises(ValueError, match="fanout"):
        tload.NeighborSampler([-2])
    with pytest.raises(ValueError, match="same number"):
        tload.NeighborSampler([{"a": 1, "b": 2}])


def test_embedding_gradients_reach_the_rows_through_sparse_adagrad(g):
    emb = tdist.DistEmbedding(g.num_nodes(), 3, "emb-adagrad", init_func=lambda s, d: torch.full(s, 0.5, dtype=d))
    opt = tdist.optim.SparseAdagrad([emb], lr=0.1)
    ids = torch.tensor([4, 8, 4])
    rows = emb(ids)
    assert rows.requires_grad
    (rows * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    opt.step()
    # Row 4 got gradient 1+1 per element (repeats are summed), row 8 got 1.
    grad = torch.tensor([[2.0, 4.0, 6.0], [1.0, 2.0, 3.0]])
    expected = 0.5 - 0.1 * grad / (grad.square().sqrt() + 1e-10)
    torch.testing.assert_close(emb.weight[[4, 8]], expected)
    torch.testing.assert_close(emb.weight[[5]], torch.full((1, 3), 0.5))
    with torch.no_grad():
        assert not emb([1]).requires_grad


def test_sparse_adam_first_step_moves_by_lr(g):
    emb = tdist.DistEmbedding(g.num_nodes(), 2, "emb-adam")
    opt = tdist.optim.SparseAdam([emb], lr=0.01)
    (emb([1, 2]) * torch.tensor([[1.0, -1.0], [2.0, 0.5]])).sum().backward()
    opt.step()
    # Adam's first bias-corrected step is lr * sign(gradient).
    torch.testing.assert_close(emb.weight[[1, 2]], torch.tensor([[-0.01, 0.01], [-0.01, -0.01]]), atol=1e-6,
                               rtol=0)


def test_embedding_save_and_load(g, tmp_path):
    emb = tdist.DistEmbedding(g.num_nodes(), 2, "emb-saved", init_func=lambda s, d: torch.rand(s, dtype=d))
    before = emb.weight[torch.arange(3000)]
    emb.save(tmp_path / "e.npy")
    emb.weight[torch.arange(3000)] = torch.zeros(3000, 2)
    emb.load(tmp_path / "e.npy")
    torch.testing.assert_close(emb.weight[torch.arange(3000)], before)
    assert np.load(tmp_path / "e.npy").shape == (3000, 2)


def test_dgl_module_paths():
    import tessera.dgl as dgl
    import tessera.dgl.distributed
    import tessera.dgl.nn.pytorch as dglnn
    from tessera.dgl import DGLGraph, nn  # noqa: F401
    from tessera.dgl.distributed import DistGraph, DistTensor, node_split  # noqa: F401
    from tessera.dgl.distributed.optim import SparseAdam
    assert dgl.distributed.DistGraph is tdist.DistGraph
    assert dgl.distributed.DistNodeDataLoader is tload.DistNodeDataLoader
    assert dgl.dataloading.NeighborSampler is tload.NeighborSampler
    assert dglnn.SAGEConv is tessera.nn.SAGEConv and nn.pytorch.GATConv is tessera.nn.GATConv
    assert SparseAdam is tdist.optim.SparseAdam
    assert dgl.NID == "_ID" and dgl.EID == "_ID"


def test_use_before_initialize_is_a_clear_error(small_graph):
    code = ("import tessera.distributed as d\n"
            "try:\n    d.DistGraph('small')\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=python_env(), timeout=60)
    assert "ERR Tessera is not initialized: call tessera.distributed.initialize() first" in r.stdout, r.stderr


def test_sampling_in_proportion_to_an_edge_feature(g):
    """NeighborSampler(prob=...) never draws an edge of weight 0; uniform sampling does (a third of them are)."""
    seeds = torch.arange(0, 3000, 7)
    weights = g.edata["w"]
    for prob, draws_zero in (("w", False), (None, True)):
        loader = tload.DistNodeDataLoader(g, seeds, tload.NeighborSampler([4], prob=prob), batch_size=len(seeds))
        _, _, (block,) = next(iter(loader))
        assert block.number_of_edges() > len(seeds)
        assert bool((weights[block.edata[tessera.EID]] == 0).any()) == draws_zero, prob
    with pytest.raises(TypeError, match="prob names an edge feature"):
        tload.NeighborSampler([4], prob=torch.ones(3))
    with pytest.raises(KeyError, match="no edge feature of that name .it has .'w'"):
        tload.DistNodeDataLoader(g, seeds, tload.NeighborSampler([4], prob="nope"))


def test_the_role_comes_from_the_core_and_a_bad_one_is_named():
    # Whether the process was launched is the C++ job environment's answer, so
    # a TESSERA_ROLE it cannot read is refused with the variable named.
    code = "import tessera.distributed as d\ntry:\n    d.initialize()\nexcept RuntimeError as e:\n    print(e)\n"
    env = dict(python_env(), TESSERA_ROLE="bogus")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert "TESSERA_ROLE=bogus" in r.stdout, r.stdout + r.stderr


def test_a_standalone_process_leaves_half_the_cores_to_its_samplers(small_graph):
    # A standalone trainer is its host's one trainer: half the cores (at least 1) for its intra-op threads, the
    # rest for its sampler threads, unless num_threads, TESSERA_NUM_THREADS or OMP_NUM_THREADS (as PyTorch and
    # DGL's launcher read it) says otherwise, in that order.
    part = str(small_graph / "p1" / "small.json")
    code = ("import os, sys, torch, tessera.distributed as d\n"
            "d.initialize(None, num_threads=int(sys.argv[1]))\n"
            f"d.DistGraph('small', part_config={part!r})\n"
            "print(torch.get_num_threads(), os.cpu_count())\n")
    base = {k: v for k, v in python_env().items() if k not in ("TESSERA_NUM_THREADS", "OMP_NUM_THREADS")}
    cases = [({}, 0, lambda cores: max(1, cores // 2)),
             ({"OMP_NUM_THREADS": "3"}, 0, lambda cores: 3),
             ({"TESSERA_NUM_THREADS": "3", "OMP_NUM_THREADS": "5"}, 0, lambda cores: 3),
             ({"TESSERA_NUM_THREADS": "3"}, 2, lambda cores: 2)]
    for extra, arg, expect in cases:
        r = subprocess.run([sys.executable, "-c", code, str(arg)], capture_output=True, text=True,
                           env=dict(base, **extra), timeout=60)
        assert r.returncode == 0, r.stderr
        threads, cores = map(int, r.stdout.split())
        assert threads == expect(cores), (extra, arg, r.stdout)
