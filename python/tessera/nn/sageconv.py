"""SAGEConv: GraphSAGE's layer with dgl.nn.pytorch.SAGEConv's signature, parameters and math."""
import torch
from torch import nn
from torch.nn import functional as F

from .. import _C
from .dropout import Dropout
from ._graph import aggregate, check_inputs


class SAGEConv(nn.Module):
    """SAGEConv(in_feats, out_feats, aggregator_type, feat_drop=0., bias=True, norm=None, activation=None).

    aggregator_type: 'mean', 'gcn' or 'pool' ('lstm' is not provided). forward(block, feat) with feat one
    tensor (its first num_dst rows are the destinations) or a (src, dst) pair."""

    def __init__(self, in_feats, out_feats, aggregator_type, feat_drop=0.0, bias=True, norm=None,
                 activation=None):
        super().__init__()
        if aggregator_type not in ("mean", "gcn", "pool"):
            raise ValueError(f"aggregator_type must be mean, gcn or pool (Tessera has no lstm), not "
                             f"{aggregator_type!r}")
        self._in_src_feats, self._in_dst_feats = (in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats))
        self._out_feats = out_feats
        self._aggre_type = aggregator_type
        self.norm = norm
        self.feat_drop = Dropout(feat_drop)
        self.activation = activation
        if aggregator_type == "pool":
            self.fc_pool = nn.Linear(self._in_src_feats, self._in_src_feats)
        # DGL 2.x's parameters: the bias is fc_self's (nn.Linear's uniform start) where there is a fc_self, a
        # zero-started `bias` of its own for gcn; so DGL's state_dicts load, and training starts where DGL's does.
        self.fc_neigh = nn.Linear(self._in_src_feats, out_feats, bias=False)
        if aggregator_type != "gcn":
            self.fc_self = nn.Linear(self._in_dst_feats, out_feats, bias=bias)
            self.register_parameter("bias", None)
        else:
            self.bias = nn.parameter.Parameter(torch.zeros(out_feats)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        if self._aggre_type == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self._aggre_type != "gcn":
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)

    def forward(self, graph, feat, edge_weight=None):
        if edge_weight is not None:
            raise ValueError("SAGEConv: edge_weight is not supported by Tessera's layer")
        feat_src, feat_dst = check_inputs("SAGEConv", self, graph, feat, self._in_src_feats, self._in_dst_feats)
        pair = isinstance(feat, (tuple, list))
        rst = self._from_loader_aggregation(graph, feat, pair)
        if rst is not None:
            return rst
        if self.feat_drop.p > 0:
            feat_src = self.feat_drop(feat_src)
            feat_dst = self.feat_drop(feat_dst) if pair else feat_src[: graph.number_of_dst_nodes()]
        if self._aggre_type == "mean" or (self._aggre_type == "gcn" and not pair):
            # fc_neigh and the aggregation commute: run whichever order costs less (DGL always projects first
            # when in_feats > out_feats, which on sampled blocks is often the dearer order).
            grad = torch.is_grad_enabled()
            first = _C.linear_first_is_cheaper(feat_src.shape[0], graph.number_of_dst_nodes(), len(graph.indices),
                                               self._in_src_feats, self._out_feats,
                                               grad and feat_src.requires_grad,
                                               grad and self.fc_neigh.weight.requires_grad)
            reduce = self._aggre_type
            if not pair and feat_src.dtype == torch.float32 and feat_src.device.type == "cpu" and feat_src.dim() == 2:
                # The whole layer as one C++ autograd node (both GEMMs into one output, a hand-written backward).
                rst = _C.sage_conv(feat_src.contiguous(), graph.indptr, graph.indices, graph.number_of_dst_nodes(),
                                   None if reduce == "gcn" else self.fc_self.weight, self.fc_neigh.weight,
                                   self._bias(), reduce, first)
                return self._finish(rst)
            h_neigh = (aggregate(graph, self.fc_neigh(feat_src), reduce) if first
                       else self.fc_neigh(aggregate(graph, feat_src, reduce)))
        elif self._aggre_type == "gcn":  # destinations' own features given apart
            deg = graph.in_degrees().to(feat_src.dtype).unsqueeze(-1)
            h_neigh = self.fc_neigh((aggregate(graph, feat_src, "sum") + feat_dst) / (deg + 1))
        else:  # pool
            h = F.relu(self.fc_pool(feat_src))
            dst = graph.dst_of_edges()
            index = dst.unsqueeze(-1).expand(-1, h.shape[1])
            h_neigh = torch.zeros(graph.number_of_dst_nodes(), h.shape[1], dtype=h.dtype).scatter_reduce(
                0, index, h[graph.indices], "amax", include_self=False)
            h_neigh = self.fc_neigh(h_neigh)
        if self._aggre_type == "gcn":
            rst = h_neigh if self.bias is None else h_neigh + self.bias
        else:
            rst = F.linear(feat_dst, self.fc_self.weight, self.fc_self.bias) + h_neigh
        return self._finish(rst)

    def _from_loader_aggregation(self, graph, feat, pair):
        """The layer on the loader's aggregation of the block's input rows (done by its sampler threads as they
        copied the rows), when `feat` is those rows untouched and this layer's reduction is one the loader does;
        otherwise None, after asking the loader to aggregate for the next batches if it could."""
        inputs = getattr(graph, "_tessera_inputs", None)
        if (inputs is None or pair or feat is not inputs.rows or feat.requires_grad or self._aggre_type == "pool"
                or (self.feat_drop.p > 0 and self.training)):
            return None
        aggregated = inputs.aggregated(self._aggre_type)
        if aggregated is None:
            return None
        x_dst = None if self._aggre_type == "gcn" else feat[: graph.number_of_dst_nodes()]
        # A ReLU activation (and no norm after it) runs inside the layer's node: no pass or node of its own.
        relu = self.norm is None and (self.activation in (F.relu, torch.relu) or isinstance(self.activation, nn.ReLU))
        rst = _C.sage_conv_aggregated(x_dst, aggregated, None if self._aggre_type == "gcn" else self.fc_self.weight,
                                      self.fc_neigh.weight, self._bias(), relu)
        return rst if relu else self._finish(rst)

    def _bias(self):
        return self.bias if self._aggre_type == "gcn" else self.fc_self.bias

    def _finish(self, rst):
        if self.activation is not None:
            rst = self.activation(rst)
        if self.norm is not None:
            rst = self.norm(rst)
        return rst
