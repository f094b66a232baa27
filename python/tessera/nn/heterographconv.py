"""HeteroGraphConv: one module per relation of a heterogeneous block, their outputs aggregated per destination
type (dgl.nn.pytorch.HeteroGraphConv's signature and semantics)."""
import torch
from torch import nn


def _stack_reduce(reduce):
    return lambda tensors, dsttype: reduce(torch.stack(tensors, dim=0))


_AGGREGATES = {
    "sum": _stack_reduce(lambda s: s.sum(0)),
    "mean": _stack_reduce(lambda s: s.mean(0)),
    "max": _stack_reduce(lambda s: s.max(0)[0]),
    "min": _stack_reduce(lambda s: s.min(0)[0]),
    "stack": lambda tensors, dsttype: torch.stack(tensors, dim=1),
}


class HeteroGraphConv(nn.Module):
    """HeteroGraphConv(mods, aggregate='sum'): mods maps a relation (its name, or a (src, rel, dst) tuple) to a
    module called as mod(relation_block, (src_feat, dst_feat), *mod_args[rel], **mod_kwargs[rel]).

    forward(g, inputs, mod_args=None, mod_kwargs=None) over a HeteroBlock, where mod_args / mod_kwargs map a
    relation's name (DGL's keys) or its (src, rel, dst) tuple (for graphs that reuse a name across type pairs)
    to the extra arguments of its module. inputs is {ntype: features of the
    block's sources of that type} (the destinations are their first rows), or a (src, dst) pair of such dicts.
    Relations with no edges, or whose types have no input, are skipped; the outputs into a type are combined by
    `aggregate` ('sum', 'mean', 'max', 'min', 'stack' or a function (tensors, dsttype)). Returns {ntype: output}
    for the types that received something. As DGL does, the modules are told to accept destinations without
    in-edges."""

    def __init__(self, mods, aggregate="sum"):
        super().__init__()
        self.mod_dict = dict(mods)
        self.mods = nn.ModuleDict({str(k): v for k, v in mods.items()})
        for mod in self.mods.values():
            allow = getattr(mod, "set_allow_zero_in_degree", None)
            if callable(allow):
                allow(True)
        if isinstance(aggregate, str):
            if aggregate not in _AGGREGATES:
                raise ValueError(f"HeteroGraphConv: aggregate is one of {sorted(_AGGREGATES)} or a function, not "
                                 f"{aggregate!r}")
            self.agg_fn = _AGGREGATES[aggregate]
        else:
            self.agg_fn = aggregate

    def _get_module(self, canonical):
        for key in (canonical, canonical[1]):
            if key in self.mod_dict:
                return self.mod_dict[key]
        raise KeyError(f"HeteroGraphConv has no module for relation {canonical} (it has {list(self.mod_dict)})")

    def forward(self, g, inputs, mod_args=None, mod_kwargs=None):
        mod_args = mod_args or {}
        mod_kwargs = mod_kwargs or {}
        if isinstance(inputs, tuple):
            src_inputs, dst_inputs = inputs
        elif getattr(g, "is_block", False):
            src_inputs = inputs
            dst_inputs = {k: v[: g.number_of_dst_nodes(k)] for k, v in inputs.items()}
        else:
            raise TypeError(f"HeteroGraphConv runs on a block (from DistNodeDataLoader), not {type(g).__name__}")
        outputs = {nt: [] for nt in g.dsttypes}
        for canonical in g.canonical_etypes:
            stype, etype, dtype = canonical
            rel_graph = g[canonical]
            if rel_graph.number_of_edges() == 0 or stype not in src_inputs or dtype not in dst_inputs:
                continue
            args = mod_args.get(canonical, mod_args.get(etype, ()))
            kwargs = mod_kwargs.get(canonical, mod_kwargs.get(etype, {}))
            out = self._get_module(canonical)(rel_graph, (src_inputs[stype], dst_inputs[dtype]), *args, **kwargs)
            outputs[dtype].append(out)
        return {nt: self.agg_fn(alist, nt) for nt, alist in outputs.items() if alist}
