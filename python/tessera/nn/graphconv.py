"""GraphConv: Kipf & Welling's GCN layer with dgl.nn.pytorch.GraphConv's signature and math."""
import torch
from torch import nn

from ._graph import aggregate, check_inputs


class GraphConv(nn.Module):
    """GraphConv(in_feats, out_feats, norm='both', weight=True, bias=True, activation=None,
    allow_zero_in_degree=False). norm: 'both' (symmetric, degrees clamped to 1), 'right', 'left' or 'none'."""

    def __init__(self, in_feats, out_feats, norm="both", weight=True, bias=True, activation=None,
                 allow_zero_in_degree=False):
        super().__init__()
        if norm not in ("none", "both", "right", "left"):
            raise ValueError(f"norm must be 'none', 'both', 'right' or 'left', not {norm!r}")
        self._in_feats, self._out_feats = in_feats, out_feats
        self._norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.weight = nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        self.bias = nn.Parameter(torch.zeros(out_feats)) if bias else None
        self._activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value):
        """Whether destinations without in-edges are accepted (HeteroGraphConv sets it, as DGL's does)."""
        self._allow_zero_in_degree = bool(set_value)

    def forward(self, graph, feat, weight=None, edge_weight=None):
        if edge_weight is not None:
            raise ValueError("GraphConv: edge_weight is not supported by Tessera's layer")
        feat_src, _ = check_inputs("GraphConv", self, graph, feat, self._in_feats)
        in_deg = graph.in_degrees()
        if not self._allow_zero_in_degree and bool((in_deg == 0).any()):
            raise ValueError("GraphConv: some destination nodes have no in-edges, so their output would be "
                             "invalid; add self-loops or pass allow_zero_in_degree=True (as in DGL)")
        if self._norm in ("left", "both"):
            out_deg = graph.out_degrees().to(feat_src.dtype).clamp(min=1)
            scale = out_deg.pow(-0.5) if self._norm == "both" else 1.0 / out_deg
            feat_src = feat_src * scale.reshape((-1,) + (1,) * (feat_src.dim() - 1))
        if weight is not None and self.weight is not None:
            raise ValueError("GraphConv: an external weight was given to a module that has its own; create it with "
                             "weight=False (as DGL requires)")
        weight = weight if weight is not None else self.weight
        if weight is not None and self._in_feats > self._out_feats:
            rst = aggregate(graph, torch.matmul(feat_src, weight), "sum")
        else:
            rst = aggregate(graph, feat_src, "sum")
            if weight is not None:
                rst = torch.matmul(rst, weight)
        if self._norm in ("right", "both"):
            deg = in_deg.to(rst.dtype).clamp(min=1)
            scale = deg.pow(-0.5) if self._norm == "both" else 1.0 / deg
            rst = rst * scale.reshape((-1,) + (1,) * (rst.dim() - 1))
        if self.bias is not None:
            rst = rst + self.bias
        if self._activation is not None:
            rst = self._activation(rst)
        return rst
