"""dgl.dataloading.negative_sampler: how an edge loader draws the negative pairs of a batch. The loader hands the
description to Tessera's C++ sampler threads, which draw the negatives together with the positive batch; called
directly, sampler(g, eids) draws them here."""
import torch


class _BaseNegativeSampler:
    """DGL's base class of negative samplers: sampler(g, eids) calls _generate(g, eids, canonical_etype) per edge
    type. A subclass of your own runs in the loader's sampler thread; the built-ins below run in C++."""

    def __call__(self, g, eids):
        if isinstance(eids, dict):
            return {g.to_canonical_etype(k): self._generate(g, torch.as_tensor(v), g.to_canonical_etype(k))
                    for k, v in eids.items()}
        return self._generate(g, torch.as_tensor(eids), g.canonical_etypes[0])

    def _generate(self, g, eids, canonical_etype):
        raise NotImplementedError("a negative sampler implements _generate(g, eids, canonical_etype)")


class _Negatives(_BaseNegativeSampler):
    mode = None

    def __call__(self, g, eids):
        """Negatives for edges `eids` of g: (sources, destinations), or on a typed graph, for {etype: IDs},
        {etype: (sources, destinations)} in type-local IDs."""
        if isinstance(eids, dict):
            return super().__call__(g, eids)
        return self._generate(g, torch.as_tensor(eids), None)

    def __init__(self, k):
        if isinstance(k, bool) or int(k) != k or int(k) < 1:
            raise ValueError(f"{type(self).__name__}(k): k is the number of negatives per edge, at least 1, not {k!r}")
        self.k = int(k)

    def __repr__(self):
        return f"{type(self).__name__}({self.k})"


class PerSourceUniform(_Negatives):
    """PerSourceUniform(k): for each edge (u, v), k pairs (u, v') with v' drawn uniformly from all nodes (of the
    edge type's destination type)."""

    mode = "per_source"

    def _generate(self, g, eids, etype):
        src, _ = g.find_edges(eids, etype)
        n = g.num_nodes() if etype is None else g.num_nodes(etype[2])
        return src.repeat_interleave(self.k), torch.randint(0, n, (len(src) * self.k,))


class Uniform(PerSourceUniform):
    """Uniform(k): DGL's name for PerSourceUniform(k)."""


class GlobalUniform(_Negatives):
    """GlobalUniform(k, exclude_self_loops=True, replace=False): k pairs per edge of the batch, drawn uniformly
    from all pairs of nodes that are not edges of the graph (nor self-loops, nor repeats within the batch unless
    replace); like DGL, a batch may get fewer on a very dense graph."""

    mode = "global"

    def __init__(self, k, exclude_self_loops=True, replace=False):
        super().__init__(k)
        self.exclude_self_loops = bool(exclude_self_loops)
        self.replace = bool(replace)

    def _generate(self, g, eids, etype):
        from .. import _C
        wanted = len(eids) * self.k
        if etype is None:
            src, dst = torch.randint(0, g.num_nodes(), (wanted * 2,)), torch.randint(0, g.num_nodes(), (wanted * 2,))
            keep = ~_C.has_edges(src, dst)
        else:  # drawn per type, asked in homogeneous IDs
            book = g.get_partition_book()
            src = torch.randint(0, g.num_nodes(etype[0]), (wanted * 2,))
            dst = torch.randint(0, g.num_nodes(etype[2]), (wanted * 2,))
            keep = ~_C.has_edges(book.map_to_homo_nid(src, etype[0]), book.map_to_homo_nid(dst, etype[2]),
                                 ":".join(etype))
        if self.exclude_self_loops and (etype is None or etype[0] == etype[2]):
            keep &= src != dst
        src, dst = src[keep], dst[keep]
        if not self.replace:
            pairs = torch.unique(torch.stack([src, dst], 1), dim=0)
            pairs = pairs[torch.randperm(len(pairs))]
            src, dst = pairs[:, 0], pairs[:, 1]
        return src[:wanted], dst[:wanted]


# The samplers the loader hands to C++ by their mode (a subclass of them may change what they draw).
BUILT_IN = (PerSourceUniform, Uniform, GlobalUniform)
