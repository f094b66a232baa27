"""DistDataset: GraphLearn-for-PyTorch's name for the partitioned graph a loader samples, here a Tessera
partition opened as a DistGraph, with the node data the loaders gather."""
from ..distributed.graph import DistGraph


class DistDataset:
    """DistDataset(graph_name, part_config, feature_name="feat", label_name="label"), or DistDataset.of(g) for
    a DistGraph already open. `graph` is the DistGraph."""

    def __init__(self, graph_name=None, part_config=None, feature_name="feat", label_name="label", graph=None):
        self.graph = graph if graph is not None else DistGraph(graph_name, part_config=part_config)
        self.feature_name = feature_name
        self.label_name = label_name

    @classmethod
    def of(cls, data, feature_name="feat", label_name="label"):
        if isinstance(data, DistDataset):
            return data
        if isinstance(data, DistGraph):
            return cls(graph=data, feature_name=feature_name, label_name=label_name)
        raise TypeError(f"a tessera.pyg loader samples a DistDataset or a tessera.distributed.DistGraph, not "
                        f"{type(data).__name__}")
