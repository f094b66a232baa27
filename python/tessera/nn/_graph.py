"""What tessera.nn's layers need of a graph: a Block's CSR-by-destination arrays."""
import torch

from .. import _C


def expand_feat(graph, feat):
    """(source features, destination features) from `feat`: a pair, or one tensor whose first num_dst rows are
    the destinations (DGL's block convention)."""
    if isinstance(feat, (tuple, list)):
        src, dst = feat
        return src, dst
    return feat, feat[: graph.number_of_dst_nodes()]


def check_block(graph, feat_src, layer):
    if not hasattr(graph, "indptr"):
        raise TypeError(f"{layer} runs on a Tessera Block (from DistNodeDataLoader), not {type(graph).__name__}")
    if feat_src.shape[0] != graph.number_of_src_nodes():
        raise ValueError(f"{layer}: {feat_src.shape[0]} source feature rows for a block of "
                         f"{graph.number_of_src_nodes()} source nodes")


def aggregate(graph, x, reduce):
    """sum / mean / gcn-mean of x's rows over each destination's in-edges, by Tessera's C++ kernels (autograd
    included)."""
    if x.dtype != torch.float32 or x.device.type != "cpu":
        return _torch_aggregate(graph, x, reduce)
    shape = x.shape
    out = _C.csr_aggregate(x.reshape(shape[0], -1).contiguous(), graph.indptr, graph.indices, reduce)
    return out.reshape((out.shape[0],) + tuple(shape[1:]))


def _torch_aggregate(graph, x, reduce):
    dst = graph.dst_of_edges()
    out = torch.zeros((graph.number_of_dst_nodes(),) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    out.index_add_(0, dst, x[graph.indices])
    deg = graph.in_degrees().to(x.dtype).reshape((-1,) + (1,) * (x.dim() - 1))
    if reduce == "mean":
        out = out / deg.clamp(min=1)
    elif reduce == "gcn":
        out = (out + x[: graph.number_of_dst_nodes()]) / (deg + 1)
    return out


def edge_softmax(graph, scores):
    """Softmax of per-edge scores [E, ...] over each destination's in-edges."""
    dst = graph.dst_of_edges()
    index = dst.reshape((-1,) + (1,) * (scores.dim() - 1)).expand_as(scores)
    shape = (graph.number_of_dst_nodes(),) + tuple(scores.shape[1:])
    peak = torch.full(shape, float("-inf"), dtype=scores.dtype).scatter_reduce(0, index, scores, "amax",
                                                                                include_self=True)
    e = torch.exp(scores - peak[dst])
    total = torch.zeros(shape, dtype=scores.dtype).index_add_(0, dst, e)
    return e / total[dst]


def edge_weighted_sum(graph, messages, weights=None):
    """sum over in-edges of weights[e] * messages[e] (messages[e] without weights), per destination."""
    dst = graph.dst_of_edges()
    out = torch.zeros((graph.number_of_dst_nodes(),) + tuple(messages.shape[1:]), dtype=messages.dtype)
    return out.index_add_(0, dst, messages if weights is None else messages * weights)
