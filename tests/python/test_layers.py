"""tessera.nn's layers against dense references of DGL's formulas, on hand-built blocks (no job needed)."""
import pytest
import torch
import torch.nn.functional as F

import tessera.nn as tnn
from tessera.dataloading import Block
from tessera.dataloading.loader import PreparedInputs


def random_block(num_src=12, num_dst=5, max_deg=4, seed=0, isolated=(3,)):
    g = torch.Generator().manual_seed(seed)
    indptr, indices = [0], []
    for d in range(num_dst):
        deg = 0 if d in isolated else int(torch.randint(1, max_deg + 1, (1,), generator=g))
        indices += torch.randint(0, num_src, (deg,), generator=g).tolist()
        indptr.append(len(indices))
    t = lambda v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
    return Block(num_dst, torch.arange(100, 100 + num_src), t(indptr), t(indices), torch.arange(len(indices)))


def dense_adjacency(block):
    a = torch.zeros(block.number_of_dst_nodes(), block.number_of_src_nodes())
    src, dst = block.edges()
    a.index_put_((dst, src), torch.ones(len(src)), accumulate=True)
    return a


@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool"])
@pytest.mark.parametrize("in_feats,out_feats", [(6, 3), (3, 6)])  # both orders of projection and aggregation
def test_sageconv_matches_dgl_formula(aggregator, in_feats, out_feats):
    torch.manual_seed(0)
    block = random_block()
    x = torch.randn(block.number_of_src_nodes(), in_feats, requires_grad=True)
    conv = tnn.SAGEConv(in_feats, out_feats, aggregator)
    bias = conv.bias if aggregator == "gcn" else conv.fc_self.bias
    torch.nn.init.normal_(bias)
    out = conv(block, x)
    a = dense_adjacency(block)
    deg = a.sum(1, keepdim=True)
    x_dst = x[: block.number_of_dst_nodes()]
    if aggregator == "mean":
        ref = F.linear(x_dst, conv.fc_self.weight) + conv.fc_neigh(a @ x / deg.clamp(min=1)) + bias
    elif aggregator == "gcn":
        ref = conv.fc_neigh((a @ x + x_dst) / (deg + 1)) + bias
    else:
        h = F.relu(conv.fc_pool(x))
        pooled = torch.stack([h[a[d] > 0].max(0).values if deg[d] > 0 else torch.zeros(in_feats)
                              for d in range(len(a))])
        ref = F.linear(x_dst, conv.fc_self.weight) + conv.fc_neigh(pooled) + bias
    assert out.shape == (block.number_of_dst_nodes(), out_feats)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    # The input's gradient and every parameter's (mean and gcn run as one fused C++ node).
    wrt = [x] + list(conv.parameters())
    for g1, g2 in zip(torch.autograd.grad(out.square().sum(), wrt), torch.autograd.grad(ref.square().sum(), wrt)):
        torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("aggregator", ["mean", "gcn"])
def test_sageconv_on_the_loaders_aggregation_matches_the_formula(aggregator):
    """A first layer given the rows the loader fetched takes the loader's aggregation of them (PreparedInputs)
    instead of aggregating again: the same output and parameter gradients; a reduction the batch lacks is asked
    for, and rows that need a gradient, a pair, or an active feat_drop take the ordinary path."""
    torch.manual_seed(0)
    block = random_block()
    x = torch.randn(block.number_of_src_nodes(), 6)
    a = dense_adjacency(block)
    deg = a.sum(1, keepdim=True)
    x_dst = x[: block.number_of_dst_nodes()]
    aggregated = (a @ x + x_dst) / (deg + 1) if aggregator == "gcn" else a @ x / deg.clamp(min=1)
    asked = []
    conv = tnn.SAGEConv(6, 3, aggregator)
    torch.nn.init.normal_(conv.bias if aggregator == "gcn" else conv.fc_self.bias)
    block._tessera_inputs = PreparedInputs(x, aggregated, aggregator, asked.append)
    out = conv(block, x)
    ref = conv(block, x.clone())  # not the loader's rows: the ordinary path
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    params = list(conv.parameters())
    for g1, g2 in zip(torch.autograd.grad(out.square().sum(), params), torch.autograd.grad(ref.square().sum(), params)):
        torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-5)
    assert asked == []
    # Activations: ReLU runs inside the layer's node, others (and ReLU before a norm) after it.
    for activation, norm in [(F.relu, None), (torch.nn.ReLU(), None), (torch.tanh, None),
                             (F.relu, torch.nn.LayerNorm(3))]:
        layer = tnn.SAGEConv(6, 3, aggregator, activation=activation, norm=norm)
        layer.load_state_dict(conv.state_dict(), strict=False)
        got, want = layer(block, x), layer(block, x.clone())
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        wrt = list(layer.parameters())
        for g1, g2 in zip(torch.autograd.grad(got.square().sum(), wrt), torch.autograd.grad(want.square().sum(), wrt)):
            torch.testing.assert_close(g1, g2, rtol=1e-4, atol=1e-5)
    # The aggregation is what the layer used: another one changes the output.
    block._tessera_inputs = PreparedInputs(x, aggregated + 1, aggregator, asked.append)
    assert not torch.allclose(conv(block, x), ref)
    other = "mean" if aggregator == "gcn" else "gcn"
    block._tessera_inputs = PreparedInputs(x, aggregated, other, asked.append)
    torch.testing.assert_close(conv(block, x), ref, rtol=1e-5, atol=1e-5)
    assert asked == [aggregator]
    # Paths that cannot use it, given a wrong aggregation so that using it would show.
    block._tessera_inputs = PreparedInputs(x, aggregated + 1, aggregator, asked.append)
    x.requires_grad_(True)
    torch.testing.assert_close(conv(block, x), ref, rtol=1e-5, atol=1e-5)
    x.requires_grad_(False)
    torch.testing.assert_close(conv(block, (x, x_dst)), ref, rtol=1e-5, atol=1e-5)
    dropping = tnn.SAGEConv(6, 3, aggregator, feat_drop=0.5)
    dropping.load_state_dict(conv.state_dict())
    dropping.eval()  # no dropout: the aggregation serves
    assert not torch.allclose(dropping(block, x), ref)
    dropping.train()
    torch.manual_seed(1)
    dropped = dropping(block, x)
    torch.manual_seed(1)
    torch.testing.assert_close(dropped, dropping(block, x.clone()))


def test_tessera_dropout_is_torchs_in_distribution_and_repeats_under_a_seed():
    drop = tnn.Dropout(0.3)
    assert isinstance(drop, torch.nn.Dropout)
    x = torch.randn(400, 50, requires_grad=True)
    torch.manual_seed(7)
    out = drop(x)
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.7) < 5 * (0.3 * 0.7 / x.numel()) ** 0.5
    torch.testing.assert_close(out[kept], x[kept] / 0.7)
    (g,) = torch.autograd.grad(out.sum(), x)
    torch.testing.assert_close(g, kept.float() / 0.7)
    torch.manual_seed(7)
    assert torch.equal(drop(x), out)
    drop.eval()
    assert drop(x) is x
    x64 = torch.randn(10, 4, dtype=torch.float64)  # not the kernel's dtype: torch's own dropout
    drop.train()
    assert drop(x64).dtype == torch.float64


# DGL 2.x's parameters by name, and how each starts: "xavier" (Glorot uniform, gain relu), "linear" (nn.Linear's
# uniform start, bound 1/sqrt(fan_in)), "zeros".
DGL_STARTS = {
    "mean": {"fc_neigh.weight": "xavier", "fc_self.weight": "xavier", "fc_self.bias": "linear"},
    "gcn": {"fc_neigh.weight": "xavier", "bias": "zeros"},
    "pool": {"fc_pool.weight": "xavier", "fc_pool.bias": "linear", "fc_neigh.weight": "xavier",
             "fc_self.weight": "xavier", "fc_self.bias": "linear"},
}


@pytest.mark.parametrize("aggregator", sorted(DGL_STARTS))
def test_sageconv_starts_as_dgls(aggregator):
    torch.manual_seed(0)
    in_feats, out_feats = 40, 30
    conv = tnn.SAGEConv(in_feats, out_feats, aggregator)
    params = dict(conv.named_parameters())
    assert set(params) == set(DGL_STARTS[aggregator]), sorted(params)
    xavier = torch.nn.init.calculate_gain("relu") * (6.0 / (in_feats + out_feats)) ** 0.5
    for name, start in DGL_STARTS[aggregator].items():
        p = params[name].detach()
        if start == "zeros":
            assert torch.count_nonzero(p) == 0, name
            continue
        bound = xavier if start == "xavier" else 1.0 / in_feats ** 0.5
        if name.startswith("fc_pool.weight"):
            bound = torch.nn.init.calculate_gain("relu") * (6.0 / (2 * in_feats)) ** 0.5
        # Uniform on [-bound, bound]: inside it, and spread over most of it.
        assert p.abs().max() <= bound + 1e-6 and p.abs().max() > 0.8 * bound, (name, float(p.abs().max()), bound)


def test_other_layers_start_their_biases_at_zero_as_dgl():
    for layer, names in ((tnn.GraphConv(5, 4), ["bias"]), (tnn.GATConv(5, 4, 2), ["bias"]),
                         (tnn.RelGraphConv(5, 4, 3, "basis", 2), ["h_bias"])):
        for name in names:
            assert torch.count_nonzero(dict(layer.named_parameters())[name]) == 0, (type(layer).__name__, name)


def test_sageconv_takes_a_src_dst_pair():
    torch.manual_seed(1)
    block = random_block()
    conv = tnn.SAGEConv(4, 3, "mean")
    x = torch.randn(block.number_of_src_nodes(), 4)
    torch.testing.assert_close(conv(block, x), conv(block, (x, x[: block.number_of_dst_nodes()])))


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
def test_graphconv_matches_dgl_formula(norm):
    torch.manual_seed(2)
    block = random_block(isolated=())
    x = torch.randn(block.number_of_src_nodes(), 4)
    conv = tnn.GraphConv(4, 3, norm=norm)
    torch.nn.init.normal_(conv.bias)
    a = dense_adjacency(block)
    h = x
    if norm in ("both", "left"):
        out_deg = a.sum(0).clamp(min=1)
        h = h * (out_deg.pow(-0.5) if norm == "both" else 1 / out_deg).unsqueeze(1)
    ref = a @ h @ conv.weight
    if norm in ("both", "right"):
        in_deg = a.sum(1).clamp(min=1)
        ref = ref * (in_deg.pow(-0.5) if norm == "both" else 1 / in_deg).unsqueeze(1)
    torch.testing.assert_close(conv(block, x), ref + conv.bias, rtol=1e-5, atol=1e-5)


def test_graphconv_refuses_zero_in_degree_as_dgl_does():
    block = random_block(isolated=(3,))
    with pytest.raises(ValueError, match="allow_zero_in_degree"):
        tnn.GraphConv(4, 3)(block, torch.randn(block.number_of_src_nodes(), 4))
    out = tnn.GraphConv(4, 3, allow_zero_in_degree=True)(block, torch.randn(block.number_of_src_nodes(), 4))
    assert out.shape == (5, 3)


def test_gatconv_matches_attention_formula():
    torch.manual_seed(3)
    block = random_block(isolated=()).with_self_loops()
    heads, out_feats = 2, 3
    conv = tnn.GATConv(4, out_feats, heads)
    torch.nn.init.normal_(conv.bias)
    x = torch.randn(block.number_of_src_nodes(), 4)
    out = conv(block, x)
    z = conv.fc(x).view(-1, heads, out_feats)
    el, er = (z * conv.attn_l).sum(-1), (z * conv.attn_r).sum(-1)
    src, dst = block.edges()
    ref = torch.zeros(block.number_of_dst_nodes(), heads, out_feats)
    for d in range(block.number_of_dst_nodes()):
        s = src[dst == d]
        a = torch.softmax(F.leaky_relu(el[s] + er[d], 0.2), 0)  # [deg, heads]
        ref[d] = (a.unsqueeze(-1) * z[s]).sum(0)
    torch.testing.assert_close(out, ref + conv.bias.view(1, heads, out_feats), rtol=1e-5, atol=1e-5)


def test_with_self_loops_puts_each_destination_first_among_its_edges():
    block = random_block()
    looped = block.with_self_loops()
    assert looped.number_of_edges() == block.number_of_edges() + block.number_of_dst_nodes()
    for d in range(block.number_of_dst_nodes()):
        assert int(looped.indices[looped.indptr[d]]) == d
        torch.testing.assert_close(looped.indices[looped.indptr[d] + 1: looped.indptr[d + 1]],
                                   block.indices[block.indptr[d]: block.indptr[d + 1]])


LAYERS = {
    "SAGEConv": lambda: tnn.SAGEConv(4, 3, "mean"),
    "SAGEConv pool": lambda: tnn.SAGEConv(4, 3, "pool"),
    "GraphConv": lambda: tnn.GraphConv(4, 3, allow_zero_in_degree=True),
    "GATConv": lambda: tnn.GATConv(4, 3, 2, allow_zero_in_degree=True),
    "RelGraphConv": lambda: tnn.RelGraphConv(4, 3, 2),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_name_themselves_and_the_shapes_on_bad_input(name):
    """Before any kernel runs: the wrong number of rows or columns, a 1-d tensor, integer features, features of
    another dtype than the weights, and something that is not a block: errors naming the layer and the shapes."""
    block = random_block()
    layer = LAYERS[name]()
    cls = name.split()[0]
    extra = (torch.zeros(block.number_of_edges(), dtype=torch.int64),) if cls == "RelGraphConv" else ()
    n = block.number_of_src_nodes()
    cases = [
        (torch.randn(n - 1, 4), ValueError, rf"{cls}: source features of shape \({n - 1}, 4\) for a block of {n} "
                                            rf"source nodes; expected \[{n}, 4\]"),
        (torch.randn(n, 5), ValueError, rf"{cls}: source features of shape \({n}, 5\) .* expected \[{n}, 4\]"),
        (torch.randn(n), ValueError, rf"{cls}: source features of shape \({n},\)"),
        (torch.ones(n, 4, dtype=torch.int64), TypeError, rf"{cls}: source features must be floating-point, got "
                                                          rf"torch.int64 of shape \({n}, 4\)"),
        (torch.randn(n, 4, dtype=torch.float64), TypeError, rf"{cls}: source features are torch.float64 .* the "
                                                             rf"layer's parameters are torch.float32"),
    ]
    for x, error, message in cases:
        with pytest.raises(error, match=message):
            layer(block, x, *extra)
    with pytest.raises(TypeError, match=rf"{cls} runs on a Tessera Block .* not dict"):
        layer({}, torch.randn(n, 4), *extra)
    layer(block, torch.randn(n, 4), *extra)  # and the right input runs


def test_layers_reject_what_they_do_not_provide():
    block = random_block()
    with pytest.raises(ValueError, match="lstm"):
        tnn.SAGEConv(4, 3, "lstm")
    with pytest.raises(ValueError, match="destination features of shape"):
        tnn.SAGEConv(4, 3, "mean")(block, (torch.randn(block.number_of_src_nodes(), 4), torch.randn(2, 4)))
    with pytest.raises(TypeError, match="RelGraphConv: etypes must be one integer type per edge"):
        tnn.RelGraphConv(4, 3, 2)(block, torch.randn(block.number_of_src_nodes(), 4),
                                  torch.zeros(block.number_of_edges()))


def test_typed_linear_applies_each_rows_own_weight():
    torch.manual_seed(0)
    x, types = torch.randn(20, 8), torch.randint(0, 3, (20,))
    for regularizer, bases in ((None, None), ("basis", 2), ("bdd", 4)):
        layer = tnn.TypedLinear(8, 4, 3, regularizer=regularizer, num_bases=bases)
        weights = layer.weights()
        assert weights.shape == (3, 8, 4)
        expected = torch.stack([x[i] @ weights[types[i]] for i in range(20)])
        assert torch.allclose(layer(x, types), expected, atol=1e-6), regularizer
    bdd = tnn.TypedLinear(8, 4, 3, regularizer="bdd", num_bases=4).weights()
    assert bool((bdd[:, :2, 1:] == 0).all())  # block-diagonal: 4 blocks of 2 x 1
    with pytest.raises(ValueError, match="bdd"):
        tnn.TypedLinear(8, 4, 3, regularizer="bdd", num_bases=3)


def test_weight_basis_combines_shared_bases():
    basis = tnn.WeightBasis((5, 3), 2, 4)
    w = basis()
    assert w.shape == (4, 5, 3)
    expected = torch.einsum("ob,bij->oij", basis.w_comp, basis.weight)
    assert torch.allclose(w, expected, atol=1e-6)
    w.sum().backward()
    assert basis.w_comp.grad is not None and basis.weight.grad is not None


@pytest.mark.parametrize("layer_norm", [False, True])
def test_relgraphconv_matches_dgl_formula(layer_norm):
    torch.manual_seed(1)
    block = random_block(num_src=10, num_dst=4, max_deg=5)
    etypes = torch.randint(0, 3, (block.number_of_edges(),))
    norm = torch.rand(block.number_of_edges(), 1)
    conv = tnn.RelGraphConv(6, 3, 3, regularizer="basis", num_bases=2, self_loop=True, layer_norm=layer_norm)
    x = torch.randn(10, 6, requires_grad=True)
    out = conv(block, x, etypes, norm)
    w = conv.linear_r.weights()
    src, dst = block.edges()
    h = torch.zeros(4, 3)
    for e in range(block.number_of_edges()):
        h[dst[e]] += norm[e, 0] * (x[src[e]] @ w[etypes[e]])
    if layer_norm:
        h = conv.layer_norm_weight(h)
    h = h + conv.h_bias + x[:4] @ conv.loop_weight
    assert torch.allclose(out, h, atol=1e-5)
    out.sum().backward()
    assert x.grad is not None and conv.loop_weight.grad is not None
    with pytest.raises(ValueError, match="edge types"):
        conv(block, x, etypes[:-1])
