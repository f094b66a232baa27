"""apply_edges() and update_all() (DGL's message passing) for Tessera's graphs: pair graphs, frontiers, subgraphs
and blocks. Built-in functions (tessera.function) run as whole-tensor operations — copy_u with sum / mean on a
block through Tessera's CSR kernels, with their backward — and Python functions get DGL's EdgeBatch / NodeBatch.

A graph that mixes this in gives: _mp_endpoints() -> (source positions, destination positions) per edge;
_mp_frames() -> (source frame, destination frame, edge frame); _mp_num_dst(); and _mp_csr() -> (indptr,
indices) when its edges are stored by destination (a block), else None.
"""
import warnings

import torch

from .. import _C
from ..function import MessageFunction, ReduceFunction

ALL = "__ALL__"
_KINDS = {"u": "source node", "v": "destination node", "e": "edge"}


def _field(frame, name, kind):
    if name not in frame:
        raise KeyError(f"{name!r} is not a {kind} feature of this graph (its {kind} features are {sorted(frame)})")
    return frame[name]


class EdgeBatch:
    """The edges a Python edge or message function sees: .src / .dst / .data (features gathered per edge)."""

    def __init__(self, graph, eids):
        self._graph = graph
        src_frame, dst_frame, edge_frame = graph._mp_frames()
        u, v = graph._mp_endpoints()
        if eids is not None:
            u, v = u[eids], v[eids]
        self._u, self._v, self._eids = u, v, eids
        self.src = _Gathered(src_frame, u, "source node")
        self.dst = _Gathered(dst_frame, v, "destination node")
        self.data = _Gathered(edge_frame, eids, "edge")

    def batch_size(self):
        return len(self._u)

    def __len__(self):
        return self.batch_size()

    def edges(self):
        return self._u, self._v, (torch.arange(len(self._u)) if self._eids is None else self._eids)


class NodeBatch:
    """The destinations a Python reduce function sees: .data, .mailbox (messages as [nodes, degree, ...]) and
    .nodes()."""

    def __init__(self, nodes, data, mailbox):
        self._nodes = nodes
        self.data = data
        self.mailbox = mailbox

    def batch_size(self):
        return len(self._nodes)

    def __len__(self):
        return self.batch_size()

    def nodes(self):
        return self._nodes


class _Gathered:
    """A frame's rows at `index` (all rows when None), gathered when read."""

    def __init__(self, frame, index, kind):
        self._frame, self._index, self._kind = frame, index, kind

    def __getitem__(self, name):
        value = _field(self._frame, name, self._kind)
        return value if self._index is None else value[self._index]

    def __contains__(self, name):
        return name in self._frame

    def keys(self):
        return self._frame.keys()


def _operand(graph, side, name, edges):
    src_frame, dst_frame, edge_frame = graph._mp_frames()
    u, v = graph._mp_endpoints()
    if side == "e":
        value = _field(edge_frame, name, "edge")
        return value if edges is None else value[edges]
    frame, index = (src_frame, u) if side == "u" else (dst_frame, v)
    value = _field(frame, name, _KINDS[side])
    return value[index if edges is None else index[edges]]


def _message(graph, func, edges=None):
    """A built-in message function's per-edge values."""
    lhs = _operand(graph, func.lhs, func.lhs_field, edges)
    if func.op == "copy":
        return lhs
    rhs = _operand(graph, func.rhs, func.rhs_field, edges)
    if func.op == "dot":
        return (lhs * rhs).sum(-1, keepdim=True)
    return {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[func.op](lhs, rhs)


def _reduce(graph, op, messages):
    """A built-in reducer over each destination's in-edges."""
    num_dst = graph._mp_num_dst()
    _, v = graph._mp_endpoints()
    shape = (num_dst,) + tuple(messages.shape[1:])
    if op in ("sum", "mean"):
        out = torch.zeros(shape, dtype=messages.dtype, device=messages.device).index_add_(0, v, messages)
        if op == "mean":
            deg = torch.bincount(v, minlength=num_dst).to(messages.dtype)
            out = out / deg.clamp(min=1).reshape((-1,) + (1,) * (messages.dim() - 1))
        return out
    index = v.reshape((-1,) + (1,) * (messages.dim() - 1)).expand_as(messages)
    with warnings.catch_warnings():  # torch 1.13 calls scatter_reduce beta; its semantics are what DGL's are
        warnings.simplefilter("ignore", UserWarning)
        return torch.zeros(shape, dtype=messages.dtype, device=messages.device).scatter_reduce(
            0, index, messages, {"max": "amax", "min": "amin"}[op], include_self=False)


def _csr_fast_path(graph, message_func, reduce_func):
    """copy_u + sum / mean on a block's CSR with float32 CPU features: Tessera's kernel, or None."""
    csr = graph._mp_csr()
    if (csr is None or message_func.op != "copy" or message_func.lhs != "u" or reduce_func.op not in ("sum", "mean")
            or reduce_func.msg != message_func.out):
        return None
    x = _field(graph._mp_frames()[0], message_func.lhs_field, "source node")
    if x.dtype != torch.float32 or x.device.type != "cpu" or x.dim() < 1:
        return None
    indptr, indices = csr
    out = _C.csr_aggregate(x.reshape(x.shape[0], -1).contiguous(), indptr, indices, reduce_func.op)
    return out.reshape((out.shape[0],) + tuple(x.shape[1:]))


def _udf_reduce(graph, reduce_func, messages):
    """A Python reduce function over destinations bucketed by in-degree (DGL's degree bucketing)."""
    num_dst = graph._mp_num_dst()
    _, v = graph._mp_endpoints()
    dst_frame = graph._mp_frames()[1]
    order = torch.argsort(v, stable=True)
    deg = torch.bincount(v, minlength=num_dst)
    starts = torch.cumsum(deg, 0) - deg
    results = {}
    for d in torch.unique(deg).tolist():
        nodes = torch.nonzero(deg == d).flatten()
        if d == 0:
            continue
        positions = order[(starts[nodes].unsqueeze(1) + torch.arange(d)).flatten()]
        mailbox = {k: m[positions].reshape((len(nodes), d) + tuple(m.shape[1:])) for k, m in messages.items()}
        out = reduce_func(NodeBatch(nodes, _Gathered(dst_frame, nodes, "destination node"), mailbox))
        for k, value in out.items():
            if k not in results:
                results[k] = torch.zeros((num_dst,) + tuple(value.shape[1:]), dtype=value.dtype)
            results[k][nodes] = value
    return results


class MessagePassing:
    """apply_edges / update_all on a graph that provides the _mp_* accessors (see the module's docstring)."""

    def apply_edges(self, func, edges=ALL, etype=None):
        """Computes edge features: a built-in (tessera.function) or func(EdgeBatch) -> {name: tensor}."""
        eids = None if isinstance(edges, str) and edges == ALL else torch.as_tensor(edges, dtype=torch.int64)
        if isinstance(func, MessageFunction):
            results = {func.out: _message(self, func, eids)}
        elif callable(func) and not isinstance(func, ReduceFunction):
            results = func(EdgeBatch(self, eids))
        else:
            raise TypeError(f"apply_edges takes a message function (tessera.function) or a Python edge function, "
                            f"not {func!r}")
        edge_frame = self._mp_frames()[2]
        for name, value in results.items():
            if eids is None:
                edge_frame[name] = value
            else:
                full = edge_frame[name] if name in edge_frame else torch.zeros(
                    (self.num_edges(),) + tuple(value.shape[1:]), dtype=value.dtype)
                full = full.clone()
                full[eids] = value
                edge_frame[name] = full

    def update_all(self, message_func, reduce_func, apply_node_func=None, etype=None):
        """Sends messages along every edge and reduces them at the destinations into dstdata (ndata)."""
        if isinstance(reduce_func, ReduceFunction) and isinstance(message_func, MessageFunction):
            out = _csr_fast_path(self, message_func, reduce_func)
            if out is None:
                if reduce_func.msg != message_func.out:
                    raise KeyError(f"the reducer reads message {reduce_func.msg!r} but the message function writes "
                                   f"{message_func.out!r}")
                out = _reduce(self, reduce_func.op, _message(self, message_func))
            results = {reduce_func.out: out}
        else:
            if isinstance(message_func, MessageFunction):
                messages = {message_func.out: _message(self, message_func)}
            elif callable(message_func):
                messages = message_func(EdgeBatch(self, None))
            else:
                raise TypeError(f"update_all: {message_func!r} is not a message function")
            if isinstance(reduce_func, ReduceFunction):
                msg = _field(messages, reduce_func.msg, "message")
                results = {reduce_func.out: _reduce(self, reduce_func.op, msg)}
            elif callable(reduce_func):
                results = _udf_reduce(self, reduce_func, messages)
            else:
                raise TypeError(f"update_all: {reduce_func!r} is not a reduce function")
        dst_frame = self._mp_frames()[1]
        for name, value in results.items():
            dst_frame[name] = value
        if apply_node_func is not None:
            nodes = torch.arange(self._mp_num_dst())
            for name, value in apply_node_func(NodeBatch(nodes, _Gathered(dst_frame, None, "node"), {})).items():
                dst_frame[name] = value
