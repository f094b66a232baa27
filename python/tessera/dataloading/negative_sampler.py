"""dgl.dataloading.negative_sampler: how an edge loader draws the negative pairs of a batch. The loader hands the
description to Tessera's C++ sampler threads, which draw the negatives together with the positive batch; called
directly, sampler(g, eids) draws them here."""
import torch


class _Negatives:
    mode = None

    def __init__(self, k):
        if isinstance(k, bool) or int(k) != k or int(k) < 1:
            raise ValueError(f"{type(self).__name__}(k): k is the number of negatives per edge, at least 1, not {k!r}")
        self.k = int(k)

    def __repr__(self):
        return f"{type(self).__name__}({self.k})"


class PerSourceUniform(_Negatives):
    """PerSourceUniform(k): for each edge (u, v), k pairs (u, v') with v' drawn uniformly from all nodes."""

    mode = "per_source"

    def __call__(self, g, eids):
        src, _ = g.find_edges(eids)
        return src.repeat_interleave(self.k), torch.randint(0, g.num_nodes(), (len(src) * self.k,))


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

    def __call__(self, g, eids):
        from .. import _C
        n, wanted = g.num_nodes(), len(eids) * self.k
        src, dst = torch.randint(0, n, (wanted * 2,)), torch.randint(0, n, (wanted * 2,))
        keep = ~_C.has_edges(src, dst)
        if self.exclude_self_loops:
            keep &= src != dst
        src, dst = src[keep], dst[keep]
        if not self.replace:
            pairs = torch.unique(torch.stack([src, dst], 1), dim=0)
            pairs = pairs[torch.randperm(len(pairs))]
            src, dst = pairs[:, 0], pairs[:, 1]
        return src[:wanted], dst[:wanted]
