"""GATConv: the graph attention layer with dgl.nn.pytorch.GATConv's signature, parameters and math."""
import torch
from torch import nn
from torch.nn import functional as F

from ._graph import check_inputs, edge_softmax, edge_weighted_sum
from .dropout import Dropout


class GATConv(nn.Module):
    """GATConv(in_feats, out_feats, num_heads, feat_drop=0., attn_drop=0., negative_slope=0.2, residual=False,
    activation=None, allow_zero_in_degree=False, bias=True). Output: [num_dst, num_heads, out_feats]."""

    def __init__(self, in_feats, out_feats, num_heads, feat_drop=0.0, attn_drop=0.0, negative_slope=0.2,
                 residual=False, activation=None, allow_zero_in_degree=False, bias=True):
        super().__init__()
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = (in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats))
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        if isinstance(in_feats, tuple):
            self.fc_src = nn.Linear(self._in_src_feats, out_feats * num_heads, bias=False)
            self.fc_dst = nn.Linear(self._in_dst_feats, out_feats * num_heads, bias=False)
        else:
            self.fc = nn.Linear(self._in_src_feats, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = Dropout(feat_drop)
        self.attn_drop = Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.bias = nn.Parameter(torch.zeros(num_heads * out_feats)) if bias else None
        if residual:
            self.res_fc = (nn.Linear(self._in_dst_feats, num_heads * out_feats, bias=False)
                           if self._in_dst_feats != out_feats * num_heads else nn.Identity())
        else:
            self.res_fc = None
        self.activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        if hasattr(self, "fc"):
            nn.init.xavier_normal_(self.fc.weight, gain=gain)
        else:
            nn.init.xavier_normal_(self.fc_src.weight, gain=gain)
            nn.init.xavier_normal_(self.fc_dst.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)

    def set_allow_zero_in_degree(self, set_value):
        """Whether destinations without in-edges are accepted (HeteroGraphConv sets it, as DGL's does)."""
        self._allow_zero_in_degree = bool(set_value)

    def forward(self, graph, feat, edge_weight=None, get_attention=False):
        if edge_weight is not None:
            raise ValueError("GATConv: edge_weight is not supported by Tessera's layer")
        h_src, h_dst = check_inputs("GATConv", self, graph, feat, self._in_src_feats, self._in_dst_feats)
        if not self._allow_zero_in_degree and bool((graph.in_degrees() == 0).any()):
            raise ValueError("GATConv: some destination nodes have no in-edges, so their output would be invalid; "
                             "add self-loops or pass allow_zero_in_degree=True (as in DGL)")
        num_dst = graph.number_of_dst_nodes()
        h_src = self.feat_drop(h_src)
        h_dst = self.feat_drop(h_dst) if isinstance(feat, (tuple, list)) else h_src[:num_dst]
        heads, out = self._num_heads, self._out_feats
        if hasattr(self, "fc"):
            z_src = self.fc(h_src).view(-1, heads, out)
            z_dst = z_src[:num_dst] if not isinstance(feat, (tuple, list)) else self.fc(h_dst).view(-1, heads, out)
        else:
            z_src = self.fc_src(h_src).view(-1, heads, out)
            z_dst = self.fc_dst(h_dst).view(-1, heads, out)
        el = (z_src * self.attn_l).sum(-1)  # [num_src, heads]
        er = (z_dst * self.attn_r).sum(-1)  # [num_dst, heads]
        e = self.leaky_relu(el[graph.indices] + er[graph.dst_of_edges()])
        a = self.attn_drop(edge_softmax(graph, e))  # [E, heads]
        rst = edge_weighted_sum(graph, z_src[graph.indices], a.unsqueeze(-1))
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(num_dst, -1, out)
        if self.bias is not None:
            rst = rst + self.bias.view(1, heads, out)
        if self.activation is not None:
            rst = self.activation(rst)
        return (rst, a) if get_attention else rst
