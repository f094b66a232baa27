"""RelGraphConv: the R-GCN layer over a block in homogeneous form (one edge type per edge), with
dgl.nn.pytorch.RelGraphConv's signature, parameters and math."""
import torch
from torch import nn

from ._graph import check_inputs, edge_weighted_sum
from .dropout import Dropout
from .typedlinear import TypedLinear


class RelGraphConv(nn.Module):
    """RelGraphConv(in_feat, out_feat, num_rels, regularizer=None, num_bases=None, bias=True, activation=None,
    self_loop=True, dropout=0.0, layer_norm=False).

    forward(g, feat, etypes, norm=None): each edge's message is its source's row times its relation's weight
    (times norm[e], e.g. 1 / the destination's in-degree in that relation), summed per destination; then layer
    norm, bias, the self-loop feat[:num_dst] @ loop_weight, activation and dropout, in DGL's order. `etypes`
    is the block's edata[dgl.ETYPE]."""

    def __init__(self, in_feat, out_feat, num_rels, regularizer=None, num_bases=None, bias=True, activation=None,
                 self_loop=True, dropout=0.0, layer_norm=False, low_mem=False):
        # low_mem: DGL 0.5-0.9's switch between two ways of computing the same messages (its older R-GCN
        # examples pass it by name); Tessera has one way, so it changes nothing.
        super().__init__()
        if regularizer is not None and num_bases is None:
            num_bases = num_rels
        self.in_feat = in_feat
        self.linear_r = TypedLinear(in_feat, out_feat, num_rels, regularizer, num_bases)
        self.bias = bias
        self.activation = activation
        self.self_loop = self_loop
        self.layer_norm = layer_norm
        if bias:
            self.h_bias = nn.Parameter(torch.zeros(out_feat))
        if layer_norm:
            self.layer_norm_weight = nn.LayerNorm(out_feat, elementwise_affine=True)
        if self_loop:
            self.loop_weight = nn.Parameter(torch.empty(in_feat, out_feat))
            nn.init.xavier_uniform_(self.loop_weight, gain=nn.init.calculate_gain("relu"))
        self.dropout = Dropout(dropout)

    def forward(self, g, feat, etypes, norm=None, *, presorted=False):
        check_inputs("RelGraphConv", self, g, feat, self.in_feat)
        etypes = torch.as_tensor(etypes)
        if etypes.dtype.is_floating_point or etypes.dim() != 1:
            raise TypeError(f"RelGraphConv: etypes must be one integer type per edge, got {etypes.dtype} of shape "
                            f"{tuple(etypes.shape)}")
        if etypes.shape[0] != g.number_of_edges():
            raise ValueError(f"RelGraphConv: {etypes.shape[0]} edge types for a block of {g.number_of_edges()} "
                             f"edges (pass block.edata[dgl.ETYPE])")
        messages = self.linear_r(feat[g.indices], etypes, presorted)
        h = edge_weighted_sum(g, messages, None if norm is None else norm.reshape(len(messages), -1))
        num_dst = g.number_of_dst_nodes()
        if self.layer_norm:
            h = self.layer_norm_weight(h)
        if self.bias:
            h = h + self.h_bias
        if self.self_loop:
            h = h + feat[:num_dst] @ self.loop_weight
        if self.activation is not None:
            h = self.activation(h)
        return self.dropout(h)
