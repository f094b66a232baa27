"""apply_edges / update_all with tessera.dgl.function and Python functions, on pair graphs (Graph) and blocks,
against dense references (adjacency matrices), forward and backward. No servers: the graphs are built here."""
import pytest
import torch

import tessera.dgl as dgl
import tessera.dgl.function as fn
from tessera.dataloading import Block, Graph


def random_graph(n=30, m=120, seed=0):
    gen = torch.Generator().manual_seed(seed)
    src, dst = torch.randint(0, n, (m,), generator=gen), torch.randint(0, n - 5, (m,), generator=gen)
    return Graph(src, dst, n), src, dst  # nodes n-5.. have no in-edges; duplicates are likely


def dense(src, dst, n, weights=None):
    a = torch.zeros(n, n)
    a.index_put_((dst, src), torch.ones(len(src)) if weights is None else weights, accumulate=True)
    return a  # a[v, u]: (weighted) number of edges u -> v


def test_u_dot_v_and_binary_ops_match_gathers():
    g, src, dst = random_graph()
    h = torch.randn(30, 8, requires_grad=True)
    g.ndata["h"] = h
    g.apply_edges(fn.u_dot_v("h", "h", "score"))
    ref = (h[src] * h[dst]).sum(1, keepdim=True)
    assert g.edata["score"].shape == (120, 1)
    assert torch.allclose(g.edata["score"], ref)
    grad = torch.autograd.grad(g.edata["score"].sum(), h)[0]
    h2 = h.detach().clone().requires_grad_()
    expected = torch.autograd.grad((h2[src] * h2[dst]).sum(), h2)[0]
    assert torch.allclose(grad, expected, atol=1e-5)
    g.edata["w"] = torch.rand(120, 1)
    for name, op in (("u_add_v", torch.add), ("u_sub_v", torch.sub), ("u_mul_v", torch.mul), ("u_div_v", torch.div)):
        g.apply_edges(getattr(fn, name)("h", "h", "out"))
        assert torch.allclose(g.edata["out"], op(h[src], h[dst])), name
    g.apply_edges(fn.e_mul_v("w", "h", "out"))
    assert torch.allclose(g.edata["out"], g.edata["w"] * h[dst])


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_copy_u_reducers_match_dense_references(reduce):
    g, src, dst = random_graph(seed=1)
    h = torch.randn(30, 4, requires_grad=True)
    g.ndata["h"] = h
    g.update_all(fn.copy_u("h", "m"), getattr(fn, reduce)("m", "out"))
    out = g.ndata["out"]
    a = dense(src, dst, 30)
    deg = a.sum(1, keepdim=True)
    if reduce in ("sum", "mean"):
        ref = a @ h
        if reduce == "mean":
            ref = ref / deg.clamp(min=1)
    else:
        rows = []
        for v in range(30):
            msgs = h[src[dst == v]]
            rows.append(torch.zeros(4) if len(msgs) == 0 else (msgs.max(0).values if reduce == "max"
                                                                   else msgs.min(0).values))
        ref = torch.stack(rows)
    assert torch.allclose(out, ref, atol=1e-5)
    weights = torch.randn(30, 4)
    grad = torch.autograd.grad((out * weights).sum(), h)[0]
    h2 = h.detach().clone().requires_grad_()
    g2 = Graph(src, dst, 30)
    g2.ndata["h"] = h2
    if reduce in ("sum", "mean"):
        ref2 = a @ h2 / (deg.clamp(min=1) if reduce == "mean" else 1)
        assert torch.allclose(grad, torch.autograd.grad((ref2 * weights).sum(), h2)[0], atol=1e-5)
    else:
        assert torch.isfinite(grad).all() and grad.abs().sum() > 0


def test_block_copy_u_uses_the_csr_kernel_with_the_same_result():
    # A block: 6 destinations, 10 sources, edges by destination; destination 5 has no in-edge.
    indptr = torch.tensor([0, 2, 3, 3, 6, 8, 8])
    indices = torch.tensor([1, 6, 9, 0, 7, 7, 2, 8])
    block = Block(6, torch.arange(100, 110), indptr, indices, torch.arange(8))
    x = torch.randn(10, 3, requires_grad=True)
    block.srcdata["h"] = x
    for reduce in ("sum", "mean"):
        with block.local_scope():
            block.update_all(fn.copy_u("h", "m"), getattr(fn, reduce)("m", "h_new"))
            out = block.dstdata["h_new"]
        assert "h_new" not in block.dstdata, "local_scope drops what was set inside"
        dst = block.dst_of_edges()
        ref = torch.zeros(6, 3).index_add(0, dst, x[indices])
        if reduce == "mean":
            ref = ref / torch.bincount(dst, minlength=6).clamp(min=1).unsqueeze(1)
        assert torch.allclose(out, ref, atol=1e-6)
        g1 = torch.autograd.grad(out.sum(), x)[0]
        g2 = torch.autograd.grad(ref.sum(), x)[0]
        assert torch.allclose(g1, g2, atol=1e-6)
    # u_mul_e + sum on the block, against the dense product.
    block.edata["w"] = torch.rand(8, 1)
    block.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "h_w"))
    a = torch.zeros(6, 10).index_put_((block.dst_of_edges(), indices), block.edata["w"].flatten(), accumulate=True)
    assert torch.allclose(block.dstdata["h_w"], a @ x, atol=1e-6)


def test_python_edge_and_reduce_functions_work_as_in_dgl():
    g, src, dst = random_graph(seed=2)
    g.ndata["h"] = torch.randn(30, 2)
    g.apply_edges(lambda edges: {"s": edges.src["h"] - edges.dst["h"]})
    assert torch.allclose(g.edata["s"], g.ndata["h"][src] - g.ndata["h"][dst])
    g.update_all(fn.copy_u("h", "m"), lambda nodes: {"top": nodes.mailbox["m"].max(1).values})
    ref = torch.zeros(30, 2)
    for v in range(30):
        if bool((dst == v).any()):
            ref[v] = g.ndata["h"][src[dst == v]].max(0).values
    assert torch.allclose(g.ndata["top"], ref)


def test_errors_name_what_is_missing():
    g, _, _ = random_graph()
    g.ndata["h"] = torch.randn(30, 2)
    with pytest.raises(KeyError, match="'nope'.*\\['h'\\]"):
        g.apply_edges(fn.u_dot_v("h", "nope", "s"))
    with pytest.raises(KeyError, match="'x'"):
        g.update_all(fn.copy_u("h", "m"), fn.sum("x", "out"))
    with pytest.raises(ValueError, match="needs 30 rows"):
        g.ndata["bad"] = torch.zeros(3)
    with pytest.raises(TypeError):
        g.apply_edges(fn.sum("m", "o"))


def test_dgl_graph_builds_a_graph_that_passes_messages():
    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])), num_nodes=4)
    assert g.num_nodes() == 4 and g.num_edges() == 3
    g.ndata["h"] = torch.eye(4)
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
    assert torch.equal(g.ndata["s"][:3], torch.eye(4)[[2, 0, 1]])
    with pytest.raises(ValueError, match="num_nodes=2"):
        dgl.graph(([0, 3], [1, 1]), num_nodes=2)


def test_to_block_on_a_plain_graph():
    g = Graph(torch.tensor([3, 4, 3, 0]), torch.tensor([1, 1, 0, 2]), 5)
    block = dgl.to_block(g, torch.tensor([1, 0, 2]))
    assert block.srcdata[dgl.NID].tolist() == [1, 0, 2, 3, 4]
    assert block.indptr.tolist() == [0, 2, 3, 4]
    assert block.edata[dgl.EID].tolist() == [0, 1, 2, 3]


def test_typed_graph_per_relation_and_summed_across_relations():
    """A HeteroGraph (a typed frontier or pair graph): apply_edges per relation, and update_all over every
    relation sums what the relations send to a node type, as DGL's cross-type reducer 'sum'."""
    from tessera.graph.hetero_graph import HeteroGraph
    gen = torch.Generator().manual_seed(3)
    na, nb = 7, 5
    writes = (torch.randint(0, na, (20,), generator=gen), torch.randint(0, nb, (20,), generator=gen))
    cites = (torch.randint(0, nb, (15,), generator=gen), torch.randint(0, nb, (15,), generator=gen))
    g = HeteroGraph({"a": na, "b": nb}, {("a", "writes", "b"): (*writes, None), ("b", "cites", "b"): (*cites, None)})
    ha, hb = torch.randn(na, 4, requires_grad=True), torch.randn(nb, 4, requires_grad=True)
    with g.local_scope():
        g.ndata["h"] = {"a": ha, "b": hb}
        g.apply_edges(fn.u_dot_v("h", "h", "s"), etype="writes")
        assert torch.allclose(g.edges["writes"].data["s"], (ha[writes[0]] * hb[writes[1]]).sum(1, keepdim=True))
        assert "s" not in g.edges["cites"].data
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "out"))
        expected = dense(writes[0], writes[1], max(na, nb))[:nb, :na] @ ha + dense(*cites, nb) @ hb
        assert torch.allclose(g.nodes["b"].data["out"], expected, atol=1e-5)
        assert "out" not in g.nodes["a"].data  # nothing is sent to type a
        grad = torch.autograd.grad(g.nodes["b"].data["out"].sum(), hb)[0]
        assert torch.allclose(grad, dense(*cites, nb).sum(0).unsqueeze(1).expand(-1, 4), atol=1e-5)
    assert "h" not in g.nodes["a"].data, "local_scope drops what was set inside"
    assert g.num_edges("cites") == 15 and g.num_nodes() == na + nb and g.in_degrees(etype="writes").sum() == 20
    with pytest.raises(ValueError, match="etype"):
        g.edges()
    with pytest.raises(KeyError, match="nope"):
        g.apply_edges(fn.u_dot_v("h", "h", "s"), etype="nope")
