"""Each tessera.nn layer on Tessera's kernels (float32: the fused SAGEConv node, the CSR aggregation kernels,
Tessera's dropout) against the same layer in float64, where every layer runs torch's generic ops under autograd:
output and every gradient (input and parameters) to 1e-5 of the tensor's largest magnitude, for each option the
layer takes, on blocks with isolated destinations and sources that feed no destination. Dropout is compared on the
mask the float32 run drew (drawn again from the same seed) applied by hand on the float64 side.

The bar is relative to each tensor's scale, not to each element: float32 cannot meet 1e-5 element by element where
an op is ill-conditioned, and torch's own float32 ops are not either (a LayerNorm over 3 features on torch 2.15:
one element of fc_pool.weight's gradient 3.9e-5 off relative to itself, 3.5e-6 of the tensor's scale)."""
import copy
import itertools

import pytest
import torch
import torch.nn.functional as F

import tessera.nn as tnn
from tessera.dataloading import Block


def block_with_holes(seed=0, num_src=14, num_dst=6, self_loops=False):
    """Destinations 1 and 4 have no in-edges; sources past 10 feed none."""
    g = torch.Generator().manual_seed(seed)
    indptr, indices = [0], []
    for d in range(num_dst):
        deg = 0 if d in (1, 4) else int(torch.randint(1, 5, (1,), generator=g))
        indices += torch.randint(0, 10, (deg,), generator=g).tolist()
        indptr.append(len(indices))
    t = lambda v: torch.tensor(v, dtype=torch.int64)  # noqa: E731
    block = Block(num_dst, torch.arange(100, 100 + num_src), t(indptr), t(indices), torch.arange(len(indices)))
    return block.with_self_loops() if self_loops else block


def assert_near(got, want, what):
    """got (float32, as float64) within 1e-5 of want's largest magnitude (at least 1), element by element."""
    scale = max(1.0, want.abs().max().item()) if want.numel() else 1.0
    error = (got - want).abs().max().item() if want.numel() else 0.0
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} against {tuple(want.shape)}"
    assert error <= 1e-5 * scale, f"{what}: off by {error:.3g}, more than 1e-5 of its scale {scale:.3g}"


def compare(layer, block, in_feats, extra=(), drop=None, seed=7):
    """The layer in float32 against its float64 copy. `drop`: (p, where) where the float32 layer drew a dropout
    mask: "input" (feat_drop on the source rows) or "output" (RelGraphConv's dropout); the float64 copy runs
    without it and the mask is applied by hand."""
    torch.manual_seed(seed)
    x = torch.randn(block.number_of_src_nodes(), in_feats)
    for p in layer.parameters():  # biases and attention vectors away from their zero start
        torch.nn.init.normal_(p, std=0.5)
    layer64 = copy.deepcopy(layer).double()
    for module in layer64.modules():  # dropout by hand on the float64 side
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    x32 = x.clone().requires_grad_(True)
    torch.manual_seed(seed)
    out32 = layer(block, x32, *extra)
    mask = None
    if drop is not None:
        p, where = drop
        torch.manual_seed(seed)
        shape = x.shape if where == "input" else out32.shape
        mask = tnn.Dropout(p)(torch.ones(shape)).double()
    x64 = x.double().requires_grad_(True)
    out64 = layer64(block, x64 * mask if drop and drop[1] == "input" else x64, *extra)
    if drop is not None and drop[1] == "output":
        out64 = out64 * mask
    assert_near(out32.double(), out64, "output")
    weights = torch.randn(out64.shape, dtype=torch.float64)
    grads32 = torch.autograd.grad((out32 * weights.float()).sum(), [x32] + list(layer.parameters()),
                                  allow_unused=True)
    grads64 = torch.autograd.grad((out64 * weights).sum(), [x64] + list(layer64.parameters()), allow_unused=True)
    names = ["x"] + [n for n, _ in layer.named_parameters()]
    for name, g32, g64 in zip(names, grads32, grads64):
        assert (g32 is None) == (g64 is None), name
        if g32 is not None:
            assert_near(g32.double(), g64, f"{name}'s gradient")


@pytest.mark.parametrize("aggregator,bias,activation,feat_drop,first_cheaper",
                         itertools.product(["mean", "gcn", "pool"], [True, False], [None, F.relu], [0.0, 0.5],
                                           [(6, 3), (3, 6)]))
def test_sageconv(aggregator, bias, activation, feat_drop, first_cheaper):
    in_feats, out_feats = first_cheaper  # both orders of projection and aggregation
    layer = tnn.SAGEConv(in_feats, out_feats, aggregator, feat_drop=feat_drop, bias=bias, activation=activation,
                         norm=torch.nn.LayerNorm(out_feats) if activation is None and bias else None)
    compare(layer, block_with_holes(), in_feats, drop=(feat_drop, "input") if feat_drop else None)


@pytest.mark.parametrize("norm,bias,self_loops", itertools.product(["none", "both", "left", "right"], [True, False],
                                                                   [False, True]))
def test_graphconv(norm, bias, self_loops):
    for in_feats, out_feats in [(6, 3), (3, 6)]:
        layer = tnn.GraphConv(in_feats, out_feats, norm=norm, bias=bias, activation=torch.tanh,
                              allow_zero_in_degree=True)
        compare(layer, block_with_holes(self_loops=self_loops), in_feats)


@pytest.mark.parametrize("residual,bias,feat_drop", itertools.product([False, True], [True, False], [0.0, 0.5]))
def test_gatconv(residual, bias, feat_drop):
    layer = tnn.GATConv(5, 3, 2, feat_drop=feat_drop, residual=residual, bias=bias, activation=F.elu)
    compare(layer, block_with_holes(self_loops=True), 5, drop=(feat_drop, "input") if feat_drop else None)


@pytest.mark.parametrize("regularizer,self_loop,layer_norm,dropout",
                         itertools.product([None, "basis", "bdd"], [True, False], [False, True], [0.0, 0.5]))
def test_relgraphconv(regularizer, self_loop, layer_norm, dropout):
    block = block_with_holes()
    etypes = torch.randint(0, 3, (block.number_of_edges(),), generator=torch.Generator().manual_seed(2))
    layer = tnn.RelGraphConv(6, 6, 3, regularizer=regularizer, num_bases=2 if regularizer == "basis" else
                             (3 if regularizer == "bdd" else None), self_loop=self_loop, layer_norm=layer_norm,
                             dropout=dropout, activation=F.relu)
    compare(layer, block, 6, extra=(etypes,), drop=(dropout, "output") if dropout else None)
