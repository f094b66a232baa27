"""Neighbour samplers (dgl.dataloading's): they describe the sampling; Tessera's C++ sampler threads run it."""


class NeighborSampler:
    """NeighborSampler(fanouts, edge_dir='in', prob=None, replace=False, prefetch_node_feats=None,
    prefetch_labels=None, ...): `fanouts[i]` neighbours per node at layer i (input layer first), -1 for all
    in-edges, or a dict {etype: fanout} per layer (every edge type its own fanout, DGL's per-type sampling).
    prob: the name of an edge feature (one float32 per edge; on a typed graph, a type without it weighs each edge
    1) that neighbours are drawn in proportion to; edges of weight 0 are never drawn."""

    def __init__(self, fanouts, edge_dir="in", prob=None, mask=None, replace=False, prefetch_node_feats=None,
                 prefetch_labels=None, prefetch_edge_feats=None, output_device=None, fused=True):
        if edge_dir != "in":
            raise ValueError("edge_dir: Tessera samples in-edges (the direction messages flow); 'out' is not "
                             "supported")
        if mask is not None:
            raise ValueError("mask: Tessera samples every edge; give prob= (an edge weight) to bias the choice")
        if prefetch_edge_feats:
            raise ValueError("prefetch_edge_feats: Tessera's loader fetches node data only")
        if prob is not None and not isinstance(prob, str):
            raise TypeError(f"prob names an edge feature (g.edata[prob], one float per edge), not "
                            f"{type(prob).__name__}")
        self.fanouts, self.per_etype = _normalize(fanouts)
        self.replace = bool(replace)
        self.prob = prob
        self.prefetch_node_feats = _one_name(prefetch_node_feats, "prefetch_node_feats")
        self.prefetch_labels = _one_name(prefetch_labels, "prefetch_labels")
        self.output_device = output_device
        self._c = None
        self._c_for = None  # (graph, weight tensor names) self._c samples

    def c_sampler(self, g):
        """The C++ sampler for graph g, by the weight tensors `prob` names there now."""
        from .. import _C
        weights = g._edge_weight_tensors(self.prob)
        if self._c is None or self._c_for[0] is not g or self._c_for[1] != weights:
            self._c = _C.NeighborSampler(self.fanouts, self.replace, self.per_etype, weights)
            self._c_for = (g, weights)
        return self._c

    @property
    def num_layers(self):
        return len(self.fanouts)

    def sample_blocks(self, g, seed_nodes, exclude_eids=None):
        """Blocks for `seed_nodes`, sampled now on this thread (the old API, for a collate_fn)."""
        from .loader import DistNodeDataLoader
        loader = DistNodeDataLoader(g, seed_nodes, self, batch_size=max(1, len(seed_nodes)), shuffle=False,
                                    num_samplers=0)
        input_nodes, output_nodes, blocks = next(iter(loader))
        return blocks

    def __repr__(self):
        return f"NeighborSampler(fanouts={self.fanouts}, replace={self.replace})"


def _one_name(names, what):
    """One node data name, or {ntype: one name} (DGL's per-type form, for seeds given by type)."""
    if names is None:
        return None
    if isinstance(names, str):
        return names
    if isinstance(names, dict):
        return {nt: _one_name(v, f"{what}[{nt!r}]") for nt, v in names.items()}
    names = list(names)
    if len(names) != 1:
        raise ValueError(f"{what}: Tessera's loader prefetches one node feature and one label, not {names}")
    return names[0]


def _normalize(fanouts):
    """Per-layer fanouts; dict fanouts (per edge type) must give every type the same number, which Tessera
    samples from each edge type separately."""
    out, per_etype = [], False
    for i, f in enumerate(fanouts):
        if isinstance(f, dict):
            values = set(int(v) for v in f.values())
            if len(values) != 1:
                raise ValueError(f"fanouts[{i}] = {f}: Tessera samples the same number of neighbours from every "
                                 f"edge type of a layer; give one number per layer")
            per_etype = True
            f = values.pop()
        f = int(f)
        if f < -1:
            raise ValueError(f"fanouts[{i}] = {f}: a fanout is a count >= 0 or -1 (all in-edges)")
        out.append(f)
    if not out:
        raise ValueError("fanouts: give at least one layer")
    return out, per_etype


class MultiLayerNeighborSampler(NeighborSampler):
    """DGL's older name: MultiLayerNeighborSampler(fanouts, replace=False, return_eids=False)."""

    def __init__(self, fanouts, replace=False, return_eids=False, **kwargs):
        super().__init__(fanouts, replace=replace, **kwargs)


class MultiLayerFullNeighborSampler(NeighborSampler):
    """Every in-edge at each of num_layers layers."""

    def __init__(self, num_layers, **kwargs):
        super().__init__([-1] * int(num_layers), **kwargs)
