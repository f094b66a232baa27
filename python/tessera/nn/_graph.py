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


def check_inputs(layer, module, graph, feat, in_src, in_dst=None):
    """What every layer checks first, naming itself and the shapes, so that a mistake is an error about the call
    rather than a kernel's: a Tessera block; floating-point features of the layer's parameters' dtype; source rows
    [num_src, in_src] (and destination rows [num_dst, in_dst] when `feat` is a pair). Returns (source features,
    destination features) as expand_feat does."""
    if not hasattr(graph, "indptr"):
        raise TypeError(f"{layer} runs on a Tessera Block (from DistNodeDataLoader, or tessera.dataloading.Block), "
                        f"not {type(graph).__name__}")
    pair = isinstance(feat, (tuple, list))
    if pair and len(feat) != 2:
        raise ValueError(f"{layer}: a pair of features is (source, destination), got {len(feat)} tensors")
    parts = [("source", feat[0] if pair else feat, in_src, graph.number_of_src_nodes())]
    if pair:
        parts.append(("destination", feat[1], in_src if in_dst is None else in_dst, graph.number_of_dst_nodes()))
    dtype = next((p.dtype for p in module.parameters()), None)
    for what, x, width, rows in parts:
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{layer}: {what} features must be a torch.Tensor, not {type(x).__name__}")
        shape = tuple(x.shape)
        if not x.is_floating_point():
            raise TypeError(f"{layer}: {what} features must be floating-point, got {x.dtype} of shape {shape}")
        if dtype is not None and x.dtype != dtype:
            raise TypeError(f"{layer}: {what} features are {x.dtype} (shape {shape}) but the layer's parameters are "
                            f"{dtype}; convert one of them")
        if x.dim() < 2 or x.shape[0] != rows or (width is not None and x.shape[-1] != width):
            raise ValueError(f"{layer}: {what} features of shape {shape} for a block of {rows} {what} nodes; "
                             f"expected [{rows}, {width}] (the layer's in_feats)")
    return expand_feat(graph, feat)


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
