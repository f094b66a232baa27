"""Built-in message and reduce functions (dgl.function): descriptions that apply_edges() and update_all() run as
whole-tensor operations instead of calling Python per edge.

    import tessera.dgl.function as fn
    g.apply_edges(fn.u_dot_v("h", "h", "score"))
    block.update_all(fn.copy_u("h", "m"), fn.mean("m", "h_neigh"))

Message functions: copy_u, copy_e (copy_src / copy_edge), and {u,v,e}_{add,sub,mul,div,dot}_{u,v,e} of two fields
(u: the edge's source, v: its destination, e: the edge). Reducers: sum, mean, max, min; a destination without
in-edges gets 0, as in DGL.
"""
import itertools


class BuiltinFunction:
    """A built-in function's description; `name` is DGL's."""

    name = "builtin"

    def __repr__(self):
        return f"{self.name}({', '.join(repr(a) for a in self._args())})"


class MessageFunction(BuiltinFunction):
    """A message (or edge) function: op on the fields it names, written to edge field `out`."""

    def __init__(self, name, op, lhs, lhs_field, rhs, rhs_field, out):
        self.name, self.op, self.lhs, self.lhs_field, self.rhs, self.rhs_field, self.out = (
            name, op, lhs, lhs_field, rhs, rhs_field, out)

    def _args(self):
        fields = [self.lhs_field] + ([self.rhs_field] if self.rhs is not None else [])
        return fields + [self.out]


class ReduceFunction(BuiltinFunction):
    """A reducer: op over each destination's messages `msg`, written to node field `out`."""

    def __init__(self, op, msg, out):
        self.name, self.op, self.msg, self.out = op, op, msg, out

    def _args(self):
        return [self.msg, self.out]


def copy_u(u, out):
    """Message: the source's field `u`."""
    return MessageFunction("copy_u", "copy", "u", u, None, None, out)


def copy_e(e, out):
    """Message: the edge's field `e`."""
    return MessageFunction("copy_e", "copy", "e", e, None, None, out)


copy_src = copy_u
copy_edge = copy_e

_TARGETS = {"u": "source", "v": "destination", "e": "edge"}
_BINARY = ("add", "sub", "mul", "div", "dot")


def _binary(lhs, op, rhs):
    name = f"{lhs}_{op}_{rhs}"

    def make(lhs_field, rhs_field, out):
        return MessageFunction(name, op, lhs, lhs_field, rhs, rhs_field, out)

    make.__name__ = name
    verb = "dot product" if op == "dot" else op
    make.__doc__ = (f"Message: the {verb} of the {_TARGETS[lhs]}'s field and the {_TARGETS[rhs]}'s field"
                    + (" (one value per edge, the last dimension kept as 1)." if op == "dot" else "."))
    return make


for _lhs, _rhs in itertools.permutations("uve", 2):
    for _op in _BINARY:
        globals()[f"{_lhs}_{_op}_{_rhs}"] = _binary(_lhs, _op, _rhs)


def sum(msg, out):  # noqa: A001 (DGL's name)
    """Reduce: the sum of each destination's messages."""
    return ReduceFunction("sum", msg, out)


def mean(msg, out):
    """Reduce: the mean of each destination's messages."""
    return ReduceFunction("mean", msg, out)


def max(msg, out):  # noqa: A001
    """Reduce: the element-wise maximum of each destination's messages."""
    return ReduceFunction("max", msg, out)


def min(msg, out):  # noqa: A001
    """Reduce: the element-wise minimum of each destination's messages."""
    return ReduceFunction("min", msg, out)


__all__ = ["copy_u", "copy_e", "copy_src", "copy_edge", "sum", "mean", "max", "min"] + [
    f"{a}_{op}_{b}" for a, b in itertools.permutations("uve", 2) for op in _BINARY]
